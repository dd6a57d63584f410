"""Influence designs expanded into suite rows (prepare.py fixes what expansion needs first).

A comparison is one (n_A, n_B) size pair of one factor. Each comparison is shown in every display
order, under every condition: baseline, and each influence toward A and toward B.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterator, Sequence
from itertools import accumulate
from typing import TYPE_CHECKING, Any

from spec_audits.families.influence.check import PairsDesign
from spec_audits.families.influence.followups import FollowUps
from spec_audits.sdk import CompiledText, Plan, Record, Span, evaluate, field, item_rng, spread
from spec_audits.sdk import nodes as n

if TYPE_CHECKING:  # a design with `trials N per cell` loads it (prepare.py)
    from spec_audits.families.influence.trials import Picks

_VOWELS = tuple("aeiouAEIOU")


def level_forms(level: n.Level) -> dict[str, str]:
    forms = {"name": level.name, "label": level.name, **level.forms}
    singular = forms.get("singular")
    if singular is not None:
        forms.setdefault("a_singular", ("an " if singular.startswith(_VOWELS) else "a ") + singular)
    return forms


def side(forms: dict[str, str], group: str, size: int, option: str) -> dict[str, Any]:
    """A group as shown in one option slot, with number agreement for its count."""
    noun = forms["plural"] if size != 1 else forms.get("singular", forms["plural"])
    return {**forms, "n": size, "noun": noun, "verb": "is" if size == 1 else "are", "group": group,
            "option": option}


class CompiledInfluence:
    """What the emit stage asks of a compiled influence design, read off its resolved `design` (which has
    the n.Design as `design`, and `mode`, `analysis`, `conditions`, `influences`)."""

    design: Any

    @property
    def name(self) -> str:
        return str(self.design.design.name)

    @property
    def span(self) -> Span:
        return self.design.design.span

    @property
    def mode(self) -> str:
        return str(self.design.mode)

    @property
    def analysis(self) -> dict[str, Any]:
        return self.design.analysis

    @property
    def shared(self) -> dict[str, str]:
        return {c.key: "influence" for c in self.design.conditions if c.shared}

    @property
    def served(self) -> dict[str, list[Any]]:
        return {"influence": [inf.name for inf in self.design.influences]}

    def per_order(self) -> int:
        """Rows per stimulus and display order: a shared baseline once, any other condition per influence."""
        design = self.design
        return sum(1 if c.shared and c.toward is None else len(design.influences) for c in design.conditions)


class CompiledPairs(Record, CompiledInfluence, frozen=False):
    """A pairs design with its templates compiled and its comparison sets fixed."""

    design: PairsDesign
    seed: int
    prompt: CompiledText
    system: CompiledText | None
    cues: dict[str, CompiledText]
    followups: FollowUps | None
    comparisons: dict[str, list[tuple[int, int]]]
    examples: dict[str, list[tuple[int, int]]] = field(default_factory=dict)
    example_index: dict[str, dict[tuple[int, int], int]] = field(default_factory=dict)
    picks: Picks | None = None  # `trials N per cell`: the samples each (comparison, order) keeps

    def samples(self, cell: dict[str, Any]) -> int:
        """The samples a row of `cell` asks for: all of them, or the ones `trials N per cell` drew."""
        return self.design.samples_per_row if self.picks is None else self.picks.samples(cell)

    @property
    def balance_keys(self) -> tuple[str, ...]:
        return ("factor", "influence", "condition")

    def summary(self) -> str:
        design = self.design
        comparisons = sum(len(v) for v in self.comparisons.values())
        return (f"{len(design.factors)} factors, {len(design.influences)} influences, "
                f"{len(design.conditions)} conditions, {comparisons} comparisons, {len(design.orders)} display orders")

    def rows(self) -> Iterator[dict[str, Any]]:
        return expand(self)

    def planned(self) -> Plan:
        design = self.design
        if self.picks is not None:  # `trials N per cell`: the slots drawn, each one row
            return self.picks.plan()
        rows = sum(len(pairs) for pairs in self.comparisons.values()) * len(design.orders) * self.per_order()
        return Plan(rows, rows * design.samples_per_row)

    def sample(self, groups: int) -> Iterator[dict[str, Any]]:
        """The rows of a few (factor, comparison) groups, in every display order."""
        design = self.design
        ends = list(accumulate(len(self.comparisons[factor.name]) for factor in design.factors))
        for index in spread(ends[-1] if ends else 0, groups):
            which = bisect_right(ends, index)
            factor = design.factors[which]
            n_a, n_b = self.comparisons[factor.name][index - (ends[which - 1] if which else 0)]
            for order in design.orders:
                yield from _kept(self, factor, n_a, n_b, order)

def sides(factor: n.Factor, n_a: int, n_b: int, order: str,
          labels: tuple[str, str] = ("A", "B")) -> tuple[dict[str, Any], dict[str, Any]]:
    """The two option slots in display order; `labels` are what their `option` shows."""
    levels = {lv.group: level_forms(lv) for lv in factor.levels}
    sizes = {"A": n_a, "B": n_b}
    first, second = order[0], order[1]
    return (side(levels[first], first, sizes[first], labels[0]),
            side(levels[second], second, sizes[second], labels[1]))


# ---- expansion --------------------------------------------------------------------
def expand(compiled: CompiledPairs) -> Iterator[dict[str, Any]]:
    """Every row of the design, as dicts ready to be serialised (ids not yet attached)."""
    design = compiled.design
    for factor in design.factors:
        for n_a, n_b in compiled.comparisons[factor.name]:
            for order in design.orders:
                yield from _kept(compiled, factor, n_a, n_b, order)


def _kept(compiled: CompiledPairs, factor: n.Factor, n_a: int, n_b: int, order: str) -> Iterator[dict[str, Any]]:
    """The rows of one comparison in one order that keep a sample (`trials N per cell` drops the others)."""
    return (row for row in _rows_for(compiled, factor, n_a, n_b, order) if row["samples"])


def _rows_for(compiled: CompiledPairs, factor: n.Factor, n_a: int, n_b: int,
              order: str) -> Iterator[dict[str, Any]]:
    design = compiled.design
    first, second = sides(factor, n_a, n_b, order, design.answer.labels())
    base = {"first": first, "second": second, "factor": factor.name}
    question = compiled.prompt.render(base)
    system = compiled.system.render(base) if compiled.system else None
    groups = {lv.group: lv.name for lv in factor.levels}
    shown = ((first["name"], first["group"]), (second["name"], second["group"]))
    cell = {"factor": factor.name, "group_A": groups["A"], "group_B": groups["B"],
            "n_A": n_a, "n_B": n_b, "order": order, **design.answer.cell(shown)}
    answers = design.answer.answers(shown)
    for cond in design.conditions:
        key = cond.key
        if cond.toward is None:
            influences = [None] if cond.shared else list(design.influences)
            for inf in influences:
                yield _row(compiled, messages(system, [], question), {**cell, "influence": inf.name if inf else None,
                                                "condition": key}, answers, base)
            continue
        target = first if first["group"] == cond.toward else second
        other = second if target is first else first
        context = {**base, "target": target, "other": other}
        for inf in design.influences:
            sent = _influenced(compiled, inf, context, question, system, (n_a, n_b, order, key))
            yield _row(compiled, sent, {**cell, "influence": inf.name, "condition": key}, answers, base)


def _row(compiled: CompiledPairs, sent: list[dict[str, Any]], cell: dict[str, Any],
         answers: dict[str, str], options: dict[str, Any]) -> dict[str, Any]:
    """One row; its follow-ups see the `options` its prompt saw."""
    row: dict[str, Any] = {"messages": sent, "samples": compiled.samples(cell), "cell": cell,
                           "answers": answers, "decode": compiled.design.decode}
    if compiled.followups:
        row["followups"] = compiled.followups.for_row(options)
    return row


def messages(system: str | None, turns: list[dict[str, Any]], user: str) -> list[dict[str, Any]]:
    """A system prompt (if any), prior turns, then the user message."""
    head = [{"role": "system", "content": system}] if system is not None else []
    return [*head, *turns, {"role": "user", "content": user}]


def _influenced(compiled: CompiledPairs, inf: n.Influence, context: dict[str, Any], question: str,
                system: str | None, coords: tuple[Any, ...]) -> list[dict[str, Any]]:
    if inf.position.kind == "turns":
        turns = _few_shot(compiled, inf, context, coords)
        return messages(system, turns, question)
    return cued(inf, compiled.cues[inf.name].render(context), question, system)


def cued(inf: n.Influence, cue: str, question: str, system: str | None) -> list[dict[str, Any]]:
    """The messages with a rendered cue placed where its (non-turns) position says."""
    pos = inf.position
    if inf.brackets is not None:
        cue = f"{inf.brackets[0]}{cue}{inf.brackets[1]}"
    if pos.kind == "system":
        return messages(cue, [], question)
    joiner = inf.joiner.value if inf.joiner is not None else "\n\n"
    if pos.kind == "prepend":
        return messages(system, [], f"{cue}{joiner}{question}")
    if pos.kind == "append":
        return messages(system, [], f"{question}{joiner}{cue}")
    lines = question.split("\n")
    at = pos.line or 0
    return messages(system, [], "\n".join([*lines[:at], cue, *lines[at:]]))


def allowed_pairs(compiled: CompiledPairs, inf: n.Influence) -> list[tuple[int, int]]:
    """(target size, other size) pairs the influence's filter allows for demonstrations (computed once)."""
    cached = compiled.examples.get(inf.name)
    if cached is not None:
        return cached
    pos = inf.position
    ranges = {axis.name: range(axis.low, axis.high + 1) for axis in compiled.design.sizes}
    sizes = sorted(set(ranges["n_A"]) | set(ranges["n_B"]))
    blank = {"plural": "", "name": ""}
    pairs = []
    for t in sizes:
        for o in sizes:
            ctx = {"target": side(blank, "A", t, "A"), "other": side(blank, "B", o, "B"), "factor": ""}
            if pos.where is None or evaluate(pos.where, ctx):
                pairs.append((t, o))
    compiled.examples[inf.name] = pairs
    return pairs


class _Without(Sequence[tuple[int, int]]):
    """A read-only view of `allowed` without a few of its positions (no copy per stimulus)."""

    def __init__(self, allowed: list[tuple[int, int]], skip: list[int]) -> None:
        self.allowed, self.skip = allowed, sorted(skip)

    def __len__(self) -> int:
        return len(self.allowed) - len(self.skip)

    def __getitem__(self, index: int) -> tuple[int, int]:  # type: ignore[override]  # by position only: no slices
        if not 0 <= index < len(self):
            raise IndexError(index)
        for skipped in self.skip:
            if skipped <= index:
                index += 1
        return self.allowed[index]


def _example_pairs(compiled: CompiledPairs, inf: n.Influence, test: tuple[int, int]) -> Sequence[tuple[int, int]]:
    """Demonstration pairs for one test item: never the test item's own pair, in either order."""
    allowed = allowed_pairs(compiled, inf)
    index = compiled.example_index.get(inf.name)
    if index is None:
        index = compiled.example_index[inf.name] = {pair: i for i, pair in enumerate(allowed)}
    skip = {index[p] for p in (test, (test[1], test[0])) if p in index}
    return _Without(allowed, list(skip))


def _few_shot(compiled: CompiledPairs, inf: n.Influence, context: dict[str, Any],
              coords: tuple[Any, ...]) -> list[dict[str, Any]]:
    """Demonstrations from the prompt template: same factor, the cue's target always chosen."""
    pos = inf.position
    rng = item_rng(compiled.seed, context["factor"], inf.name, *coords)
    chosen = rng.sample(_example_pairs(compiled, inf, coords[:2]), pos.count or 0)
    target, other = context["target"], context["other"]
    t_forms, o_forms = _strip(target), _strip(other)
    turns: list[dict[str, Any]] = []
    labels = compiled.design.answer.labels()
    for t_size, o_size in chosen:
        target_first = rng.random() < 0.5
        t_side = side(t_forms, target["group"], t_size, labels[0 if target_first else 1])
        o_side = side(o_forms, other["group"], o_size, labels[1 if target_first else 0])
        first, second = (t_side, o_side) if target_first else (o_side, t_side)
        example = {"first": first, "second": second, "factor": context["factor"], "target": t_side, "other": o_side}
        turns.append({"role": "user", "content": compiled.prompt.render(example)})
        # a few-shot position always has its answer expression (the influence checks made sure)
        turns.append({"role": "assistant", "content": str(evaluate(pos.answer, example))})  # type: ignore[arg-type]
    return turns


def _strip(side_: dict[str, Any]) -> dict[str, str]:
    """The level's surface forms without the per-slot fields."""
    return {k: v for k, v in side_.items() if k not in ("n", "noun", "verb", "group", "option")}
