"""Influence designs over data items (DailyDilemmas, BBQ): each row of a `data` source is one binary choice.

`items DATA` replaces `sizes`: every data row gives two option texts (`option_A`, `option_B`) and the
level each option stands for (`level_A`, `level_B`; a `map` clause renames the file's columns).

Factors whose levels carry groups A and B (BBQ's nonOld / old) orient every item by group: its condition
is its factor (with several factors, the row's `factor` column names it), and toward A cues group A.
A factor without groups (DailyDilemmas' values) makes each level v a condition: it pools every item in
which v is one option's level, with group A = the v-option and group B = the other (`other`). Such an
item with levels (a, b) serves two conditions, a and b, so the suite carries its prompts once per
condition (identical requests, which the response cache answers once); toward B cues the other level.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from spec_audits.families.influence import check as pairs
from spec_audits.families.influence.clauses import EXAMPLES, FACTORS, INFLUENCES, ITEMS, TRIALS
from spec_audits.families.influence.examples import Pool, resolve_pool
from spec_audits.families.influence.expand import CompiledInfluence, cued, level_forms, messages
from spec_audits.families.influence.followups import FollowUps, compile_followups
from spec_audits.families.influence.prepare import compile_texts
from spec_audits.families.influence.trials import Picks, Slot, pick_trials
from spec_audits.sdk import (
    CompiledText,
    DesignContext,
    ErrorCollector,
    Items,
    Plan,
    Record,
    Row,
    TypedDesign,
    check_attributes,
    check_render,
    first_key,
    read_rows,
    record,
    spread,
)
from spec_audits.sdk import TemplateShape as Shape
from spec_audits.sdk import nodes as n

ITEM_COLUMNS = ("option_A", "option_B", "level_A", "level_B")
OTHER = "other"
"""group B of every item condition: whichever option does not stand for the condition's level."""
PAIRS_ONLY = ("sizes", "where", "cross", "sample")
PROMPT_NAMES = {"first", "second", "factor", "item"}
CUE_NAMES = PROMPT_NAMES | {"target", "other"}


class ItemsDesign(Record):
    """An items design, resolved: its data rows read and filtered, every name pointing at its declaration."""

    design: n.Design
    factors: dict[str, n.Factor]
    items: list[Row]
    key: str
    influences: tuple[n.Influence, ...]
    conditions: tuple[n.ConditionRef, ...]
    system: n.TemplateDef | None
    prompt: n.TemplateDef
    orders: tuple[str, ...]
    samples_per_row: int
    answer: pairs.Answer
    decode: dict[str, Any]
    mode: str
    analysis: dict[str, Any]
    followups: tuple[n.FollowUpDef, ...]
    pool: Pool | None = None  # `examples N unused | others`: the demonstration rows
    trials: tuple[int, int | None] | None = None  # `trials N per cell [seed S]`: a seeded subset of trials


def resolve_items(design: TypedDesign, context: DesignContext, errors: ErrorCollector) -> ItemsDesign | None:
    """Check an items design; None after reporting every problem found."""
    tables, start = context.tables, len(errors.diagnostics)
    for keyword in PAIRS_ONLY:
        clause = design.clause(keyword)
        if clause is not None:
            errors.add(clause.span, f"'{keyword}' does not apply to an items design: its stimuli are the data "
                       "rows", "remove it, or filter the rows in the data clause")
    ref = design.get(ITEMS)
    source = tables.lookup({d.name: d for d in context.spec.data}, ref, "data source", errors) if ref else None
    factors = pairs.select(design, FACTORS, tables.factors, "factor", errors)
    factors_clause = design.clause(FACTORS.keyword)
    if len(factors) > 1 and not all(lv.group for f in factors for lv in f.levels) and factors_clause is not None:
        errors.add(factors_clause.span,
                   f"an items design takes several factors only when their levels are grouped (A, B); "
                   f"got {len(factors)}", "give each level its group, or keep one factor")
    influences = pairs.select(design, INFLUENCES, tables.influences, "influence", errors)
    for inf in influences:
        if inf.position.kind == "turns":
            errors.add(inf.position.span, f"influence '{inf.name}' builds few-shot turns from size pairs, which "
                       f"an items design has not", "append a fixed examples block instead")
    prompt = pairs.text_ref(design.prompt, "template", tables, errors) or tables.texts.get("question")
    if prompt is None:
        errors.add(design.span, f"design '{design.name}' names no prompt template", "add 'prompt NAME'")
    orders = pairs.orders_of(design, errors)
    answer = pairs.answer_of(design, orders, errors)
    conditions = pairs.conditions_of(design, errors)
    system = pairs.text_ref(design.system, "system", tables, errors)
    samples_per_row = pairs.samples_of(design, orders, errors)
    mode = pairs.mode_of(design, errors)
    analysis = pairs.analysis_of(design, errors, answer)
    pairs.check_reading(design, mode, errors)
    pairs.positive_count(design, TRIALS, pairs.TRIALS_HINT, errors)
    if source is None or len(errors.diagnostics) > start or not factors or answer is None or prompt is None:
        return None
    by_name = {f.name: f for f in factors}
    rows = read_rows(source, ITEM_COLUMNS + (("factor",) if len(factors) > 1 else ()), context.seed, errors)
    if rows is None or not _levels_known(source, rows, by_name, errors):
        return None
    pool = None
    if design.get(EXAMPLES) is not None:
        required = ITEM_COLUMNS + (("factor",) if len(factors) > 1 else ())
        pool = resolve_pool(design, source, rows, required, context.seed, lambda row: factor_of(row, by_name), errors)
        if pool is None:
            return None
    _check_attributes(factors, rows[0], prompt, system, influences, errors)
    if len(errors.diagnostics) > start or prompt is None:
        return None
    return ItemsDesign(design=design.node, factors=by_name, items=rows, key=first_key(source), influences=influences,
                       conditions=conditions, system=system, prompt=prompt, orders=orders,
                       samples_per_row=samples_per_row, answer=answer, decode=design.decode, mode=mode,
                       analysis=analysis, followups=design.followups, pool=pool, trials=design.get(TRIALS))


def _check_attributes(factors: tuple[n.Factor, ...], item: Row, prompt: n.TemplateDef, system: n.TemplateDef | None,
                      influences: tuple[n.Influence, ...], errors: ErrorCollector) -> None:
    """`first.txt`, `item.contxt` or `ex.item.contxt` of `for ex in examples`, in any branch of any text."""
    option = record({form for factor in factors for level in factor.levels for form in level_forms(level)}
                    | {"text", "option"})
    row = record(item)
    schema: dict[str, Shape] = {**dict.fromkeys(("first", "second", "target", "other"), option), "item": row,
              "examples": Items(record(("answer",), item=row, first=option, second=option))}
    for text, kind in [(prompt, "template"), *([(system, "system")] if system else [])]:
        check_attributes(text.text, f"{kind} '{text.name}'", schema, errors)
    for inf in influences:
        if inf.text is not None:
            check_attributes(inf.text, f"influence '{inf.name}'", schema, errors)


def factor_of(row: Row, factors: dict[str, n.Factor]) -> n.Factor | None:
    return factors.get(row["factor"]) if len(factors) > 1 else next(iter(factors.values()))


def _levels_known(source: n.DataSource, rows: list[Row], factors: dict[str, n.Factor], errors: ErrorCollector) -> bool:
    for number, row in enumerate(rows, start=1):
        factor = factor_of(row, factors)
        if factor is None:
            errors.add(source.span, f"data '{source.name}': row {number} names factor '{row['factor']}', which "
                       "the design does not select", f"select it, or filter it out (factors: {', '.join(factors)})")
            return False
        levels = {lv.name: lv.group for lv in factor.levels}
        for column in ("level_A", "level_B"):
            if row[column] not in levels:
                errors.add(source.span, f"data '{source.name}': row {number} names level '{row[column]}' "
                           f"({column}), which factor '{factor.name}' does not declare",
                           f"declare it, or filter the row out with 'where' (levels: {', '.join(sorted(levels))})")
                return False
        if levels[row["level_A"]] is not None and levels[row["level_A"]] == levels[row["level_B"]]:
            errors.add(source.span, f"data '{source.name}': row {number} puts both options in group "
                       f"{levels[row['level_A']]} of factor '{factor.name}'", "each item contrasts group A with B")
            return False
    return True


class CompiledItems(Record, CompiledInfluence, frozen=False):
    """An items design with its templates compiled."""

    design: ItemsDesign
    prompt: CompiledText
    system: CompiledText | None
    cues: dict[str, CompiledText]
    picks: Picks | None = None  # `trials N per cell`: the samples each (item, order) keeps
    followups: FollowUps | None = None

    @property
    def balance_keys(self) -> tuple[str, ...]:
        if self.picks is not None:
            return ("factor", "influence", "condition")  # N trials in every cell
        return ("influence", "condition")  # levels differ in how many items name them; influences do not

    def summary(self) -> str:
        d = self.design
        return (f"{len(d.items)} items, factors {', '.join(d.factors)}, {len(d.influences)} influences, "
                f"{len(d.conditions)} conditions, {len(d.orders)} display orders")

    def rows(self) -> Iterator[dict[str, Any]]:
        for item in self.design.items:
            yield from self._item_rows(item)

    def planned(self) -> Plan:
        if self.picks is not None:
            return self.picks.plan()
        per_item = len(self.design.orders) * self.per_order()
        rows = sum(len(self._orientations(item)[1]) for item in self.design.items) * per_item
        return Plan(rows, rows * self.design.samples_per_row)

    def sample(self, groups: int) -> Iterator[dict[str, Any]]:
        """The rows of a few items, each in every orientation and order."""
        for index in spread(len(self.design.items), groups):
            yield from self._item_rows(self.design.items[index])

    def _orientations(self, item: Row) -> tuple[n.Factor, str]:
        """The item's factor and the options that stand for group A: the one of group A, or each in turn."""
        factor = factor_of(item, self.design.factors)
        assert factor is not None  # checked by resolve_items
        groups = {lv.name: lv.group for lv in factor.levels}
        if groups[item["level_A"]] is None:
            return factor, "AB"
        return factor, "A" if groups[item["level_A"]] == "A" else "B"

    def _item_rows(self, item: Row) -> Iterator[dict[str, Any]]:
        factor, orientations = self._orientations(item)
        for oriented in orientations:
            for order in self.design.orders:
                yield from (row for row in self._rows_for(item, factor, oriented, len(orientations) == 1, order)
                            if row["samples"])

    def _rows_for(self, item: Row, factor: n.Factor, oriented: str, grouped: bool,
                  order: str) -> Iterator[dict[str, Any]]:
        """The rows of one item in one orientation (`oriented`: the option standing for group A) and order."""
        d = self.design
        forms = {lv.name: level_forms(lv) for lv in factor.levels}
        slots = {letter: {**forms[item[f"level_{letter}"]], "text": item[f"option_{letter}"]} for letter in "AB"}
        labels = d.answer.labels()
        first, second = ({**slots[order[i]], "option": labels[i]} for i in (0, 1))
        level, contrast = item[f"level_{oriented}"], item[f"level_{'BA'['AB'.index(oriented)]}"]
        name, group_b = (factor.name, contrast) if grouped else (level, OTHER)
        base = {"first": first, "second": second, "factor": name, "item": item}
        question, system = self.prompt.render(base), self.system.render(base) if self.system else None
        outcome = {k: level if k == oriented else group_b for k in "AB"}
        shown_first, shown_second = ((outcome[k], "A" if k == oriented else "B") for k in order)
        shown = (shown_first, shown_second)
        answers = d.answer.answers(shown)
        cell = {"factor": name, "group_A": level, "group_B": group_b, "item": item[d.key], "order": order,
                **d.answer.cell(shown)}
        for cond in d.conditions:
            if cond.toward is None:
                for inf in [None] if cond.shared else d.influences:
                    yield self._row(messages(system, [], question), cell | {
                        "influence": inf.name if inf else None, "condition": cond.key}, answers, base)
                continue
            aimed = oriented if cond.toward == "A" else "BA"["AB".index(oriented)]
            target, other = (first, second) if order[0] == aimed else (second, first)
            for inf in d.influences:
                drawn = {} if d.pool is None else {"examples": d.pool.draw(
                    item, name, target["name"], forms, (inf.name, cond.key, order), labels)}
                cue = self.cues[inf.name].render({**base, "target": target, "other": other, **drawn})
                yield self._row(cued(inf, cue, question, system), cell | {"influence": inf.name,
                                                                         "condition": cond.key}, answers, base)

    def _row(self, sent: list[dict[str, Any]], cell: dict[str, Any], answers: dict[str, str],
             options: dict[str, Any]) -> dict[str, Any]:
        """One row; its follow-ups see the `options` its prompt saw."""
        samples = self.design.samples_per_row if self.picks is None else self.picks.samples(cell)
        row = {"messages": sent, "samples": samples, "cell": cell, "answers": answers, "decode": self.design.decode}
        if self.followups is not None:
            row["followups"] = self.followups.for_row(options)
        return row


def prepare_items(design: ItemsDesign, seed: int, errors: ErrorCollector) -> CompiledItems | None:
    """Compile the templates and render each once on the first item, in both orientations."""
    start = len(errors.diagnostics)
    provided = CUE_NAMES | ({"examples"} if design.pool is not None else set())
    prompt, system, cues = compile_texts(design, PROMPT_NAMES, provided, errors)
    if len(errors.diagnostics) > start or prompt is None:
        return None
    compiled = CompiledItems(design, prompt, system, cues)
    item = design.items[0]
    factor = factor_of(item, design.factors)
    assert factor is not None  # checked by resolve_items
    forms = {lv.name: level_forms(lv) for lv in factor.levels}
    labels = design.answer.labels()
    first, second = ({**forms[item[f"level_{k}"]], "text": item[f"option_{k}"], "option": labels[i]}
                     for i, k in enumerate("AB"))
    context: dict[str, Any] = {"first": first, "second": second, "factor": factor.name, "item": item, "target": first,
               "other": second}
    if design.pool is not None:
        context["examples"] = design.pool.draw(item, factor.name, first["name"], forms, (), labels)
    for text in [prompt, *([system] if system else []), *compiled.cues.values()]:
        check_render(text, context, errors)
    compiled.followups = compile_followups(design.followups, PROMPT_NAMES, context, errors)
    if design.trials is not None and len(errors.diagnostics) == start:
        compiled.picks = pick_trials(design, seed, ("item", "order"), *_item_rows(design), errors)
    return None if len(errors.diagnostics) > start else compiled


def _item_rows(design: ItemsDesign) -> tuple[dict[str, list[Slot]], dict[str, str]]:
    """The (item, order) rows of each cell's factor coordinate, and how messages name it: a grouped
    factor's items, or every item one of whose options stands for the level."""
    rows: dict[str, list[Slot]] = {}
    what: dict[str, str] = {}
    for item in design.items:
        factor = factor_of(item, design.factors)
        assert factor is not None  # checked by resolve_items
        grouped = {lv.name: lv.group for lv in factor.levels}[item["level_A"]] is not None  # as rows() orients
        for name in [factor.name] if grouped else [item["level_A"], item["level_B"]]:
            rows.setdefault(name, []).extend((item[design.key], order) for order in design.orders)
            what[name] = f"factor '{name}'" if grouped else f"level '{name}' of factor '{factor.name}'"
    return rows, what
