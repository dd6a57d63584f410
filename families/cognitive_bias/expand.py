"""Stage 4 for conditional cognitive-bias designs: conversations compiled, units formed, rows expanded.

A unit (the `unit` columns, e.g. target bias x scenario) holds bank rows that differ only in the human
bias. A shared condition gives one row per (unit, arm), built from the unit's first bank row, and every
bank row of the unit must agree on what those rows read; an unshared condition gives one row per
(bank row, arm). The turns before a generated turn may not read `arm`; under the paper's protocol its
share key leaves the arm out, so both arms of a unit see one acknowledgment, which the runner makes once
(Message.share); under the authors' each arm's key names the arm, so each arm makes its own, and each
row carries the extraction call that reads its free decision (SuiteRow.extract).
Options are reversed per the `reverse` draw, the same in every condition; `answers` maps each displayed
token to the option's original 0-based index, so scoring undoes the reversal.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from jinja2 import nodes as jnodes

from spec_audits.families.cognitive_bias.check import BiasCondition, BiasDesign
from spec_audits.sdk import (
    EXTRACTION_SLOT,
    CompiledText,
    ErrorCollector,
    Plan,
    Record,
    Row,
    Span,
    check_attributes,
    check_render,
    compile_text,
    environment,
    item_rng,
    key_of,
    option_lines,
    record,
    spread,
    test_case_text,
)
from spec_audits.sdk import nodes as n

Turns = list[tuple[n.Turn, CompiledText | None]]


class CompiledBias(Record, frozen=False):
    """A resolved conditional-bias design with its conversations compiled and its units formed."""

    bias: BiasDesign
    seed: int
    turns: dict[str, Turns]
    units: dict[str, list[Row]]
    extract: CompiledText | None = None

    @property
    def name(self) -> str:
        return self.bias.design.name

    @property
    def span(self) -> Span:
        return self.bias.design.span

    @property
    def mode(self) -> str:
        return "sample"

    @property
    def analysis(self) -> dict[str, Any]:
        return self.bias.analysis

    @property
    def balance_keys(self) -> tuple[str, ...]:
        return ("unit", "human_bias", "condition", "arm")

    @property
    def shared(self) -> dict[str, str]:
        return {c.name: "human_bias" for c in self.bias.conditions if c.shared}

    @property
    def served(self) -> dict[str, list[Any]]:
        return {}  # a unit's shared rows serve the human biases its bank rows have (emit.balance_report)

    def summary(self) -> str:
        b = self.bias
        return (f"{len(b.rows)} bank rows in {len(self.units)} units x {len(b.conditions)} conditions "
                f"x {len(b.arms)} arms")

    def rows(self) -> Iterator[dict[str, Any]]:
        for unit, members in self.units.items():
            yield from self._unit_rows(unit, members)

    def planned(self) -> Plan:
        bias = self.bias
        rows = len(bias.arms) * sum(1 if c.shared else len(members) for members in self.units.values()
                                    for c in bias.conditions)
        return Plan(rows, rows)

    def sample(self, groups: int) -> Iterator[dict[str, Any]]:
        """The rows of a few units, in every condition and arm."""
        units = list(self.units.items())
        for index in spread(len(units), groups):
            yield from self._unit_rows(*units[index])

    def _unit_rows(self, unit: str, members: list[Row]) -> Iterator[dict[str, Any]]:
        first = members[0]
        arms = {arm: arm_context(first, self.bias.arms, arm, self._reversed(unit, arm, "", ""))
                for arm in self.bias.arms}
        for condition in self.bias.conditions:
            for row in members[:1] if condition.shared else members:
                for arm in self.bias.arms:
                    yield self._row(unit, row, condition, arm, arms[arm])

    def _reversed(self, unit: str, arm: str, condition: str, row: str) -> bool:
        probability, by = self.bias.reverse
        coords = {"unit": unit, "arm": arm, "condition": condition, "row": row or unit}
        return probability > 0 and item_rng(self.seed, "reverse", *(coords[k] for k in by)).random() < probability

    def _row(self, unit: str, row: Row, condition: BiasCondition, arm: str, context: dict[str, Any]) -> dict[str, Any]:
        bias = self.bias
        analysis = bias.analysis
        bank_key = "" if condition.shared else key_of(bias.source, row)
        reversed_ = self._reversed(unit, arm, condition.name, bank_key)
        if reversed_ != context["reversed"]:
            context = arm_context(row, bias.arms, arm, reversed_)
        human = None if condition.shared else row[analysis["human"]]
        share = f"{self.name}|{condition.name}|{unit}|{bank_key}" + (f"|{arm}" if self.extract else "")
        messages = _messages(self.turns[condition.conversation.name], _context(row, condition, context), share)
        cell = {"target_bias": row[analysis["target"]], "human_bias": human, "unit": unit,
                "condition": condition.name, "arm": arm, "reversed": int(reversed_),
                "diagonal": None if human is None else int(human == row[analysis["target"]])}
        params = row[analysis["params"]]
        meta: dict[str, Any] = {"metric": {**{k: params[k] for k in ("k", "x_1", "x_2", "flip_treatment")},
                                           "n_options": len(context["options"])}}
        if not condition.shared:
            covariates = (*analysis.get("psm_covariates", ()), *analysis.get("scm_covariates", ()))
            values = {c: _number(row.get(c, "")) for c in dict.fromkeys(covariates)}
            meta |= {"bank_row": bank_key, "covariates": values}
        extract = None if self.extract is None else {"prompt": _extraction(self.extract, row, context),
                                                     "parse": "option_number"}
        return {"messages": messages, "samples": 1, "cell": cell, "answers": _answers(context),
                "decode": bias.decode, "meta": meta, "unit": unit, **({"extract": extract} if extract else {})}


def _number(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None


def arm_context(row: Row, arms: tuple[str, ...], arm: str, reversed_: bool) -> dict[str, Any]:
    """What a template sees as `arm`: the arm's test case (options in display order), the situation
    lines after the arms' longest identical leading run (`diverging`), and the text without them (`rest`)."""
    cases = [row[name] for name in arms]
    common = 0
    while all(common < len(c["situations"]) for c in cases) and len({c["situations"][common] for c in cases}) == 1:
        common += 1
    case = row[arm]
    options = case["options"][::-1] if reversed_ else case["options"]
    diverging = "\n".join(case["situations"][common:])
    rest = (f"Situation:\n{diverging}\n\n" if diverging else "") + \
        f"Prompt:\n{case['prompt']}\n\nAnswer Options:\n{option_lines(options)}"
    return {"situations": case["situations"], "common": "\n".join(case["situations"][:common]),
            "diverging": diverging, "prompt": case["prompt"], "options": options, "original": case["options"],
            "option_lines": option_lines(options), "text": test_case_text(case["situations"], case["prompt"], options),
            "rest": rest, "reversed": reversed_}


def _extraction(text: CompiledText, row: Row, arm: dict[str, Any]) -> str:
    """The extraction prompt of one row and arm, the decision left as the runner's slot."""
    return text.render({"row": row, "arm": arm, "answer": EXTRACTION_SLOT})


def _context(row: Row, condition: BiasCondition, arm: dict[str, Any]) -> dict[str, Any]:
    return {"row": row, "arm": arm, **{name: row[column] for name, column in condition.bindings.items()}}


def _messages(turns: Turns, context: dict[str, Any], share: str) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = []
    for index, (turn, text) in enumerate(turns):
        if turn.generate:
            message: dict[str, Any] = {"role": "assistant", "generate": True, "share": f"{share}|turn{index}"}
            if turn.decode:
                message["decode"] = {o.name: o.value for o in turn.decode}
            messages.append(message)
        else:
            assert text is not None
            messages.append({"role": turn.role, "content": text.render(context)})
    return messages


def _answers(arm: dict[str, Any]) -> dict[str, str]:
    """Displayed token -> original 0-based option index."""
    count = len(arm["options"])
    return {str(i + 1): str(count - 1 - i if arm["reversed"] else i) for i in range(count)}


def prepare_bias(bias: BiasDesign, seed: int, errors: ErrorCollector) -> CompiledBias | None:
    """Compile every conversation, form the units, and prove shared rows are the same for a whole unit."""
    before = len(errors.diagnostics)
    turns: dict[str, Turns] = {}
    for condition in bias.conditions:  # a conversation played by several conditions is compiled (and reported) once
        if condition.conversation.name not in turns:
            turns[condition.conversation.name] = _compile_turns(condition, bias, errors)
    units: dict[str, list[Row]] = {}
    for row in bias.rows:
        units.setdefault("|".join(str(row[c]) for c in bias.unit), []).append(row)
    if len(errors.diagnostics) > before:
        return None
    compiled = CompiledBias(bias, seed, turns, units, _compile_extraction(bias, errors))
    _check_sample(compiled, bias.rows[0], errors)
    if compiled.extract is not None and len(errors.diagnostics) == before:
        _check_extractions(compiled, errors)
    if len(errors.diagnostics) > before:
        return None
    for members in units.values():
        for condition in (c for c in bias.conditions if c.shared):
            _check_unit_agrees(compiled, condition, members, errors)
    return None if len(errors.diagnostics) > before else compiled


def _compile_turns(condition: BiasCondition, bias: BiasDesign, errors: ErrorCollector) -> Turns:
    conversation = condition.conversation
    provided = {"row", "arm", *condition.bindings}
    first = bias.rows[0]  # every bank row has the same columns, every arm context the same keys
    schema = {"row": record(first), "arm": record(arm_context(first, bias.arms, bias.arms[0], False))}
    last_generate = max((i for i, t in enumerate(conversation.turns) if t.generate), default=-1)
    out: Turns = []
    for index, turn in enumerate(conversation.turns):
        text = turn.text if turn.template is None else bias.templates[turn.template.name].text
        label = f"turn {index + 1} of conversation '{conversation.name}'"
        if turn.prompt or turn.answer is not None or turn.push is not None:
            errors.add(turn.span, f"{label} is for a conversation a design plays (`conversation NAME`), not a "
                       "condition's", "a condition's conversation holds texts, templates and generate turns")
            continue
        compiled = None if text is None else compile_text(text, label, provided, errors)
        if text is not None and compiled is not None:
            check_attributes(text, label, schema, errors)
            if index < last_generate and "arm" in _names(text):
                errors.add(turn.span, f"{label} reads 'arm' before the generated turn",
                           "the turns before it are the arms' common prefix (under the paper's protocol both arms "
                           "share the generated turn): only the turns after it may read arm")
        out.append((turn, compiled))
    return out


def _compile_extraction(bias: BiasDesign, errors: ErrorCollector) -> CompiledText | None:
    """The authors' extraction template: it sees `row`, `arm` and the decision as `answer`, read once."""
    if bias.extract is None:
        return None
    text, label = bias.extract.text, f"template '{bias.extract.name}'"
    compiled = compile_text(text, label, {"row", "arm", "answer"}, errors)
    if compiled is None:
        return None
    first = bias.rows[0]
    schema = {"row": record(first), "arm": record(arm_context(first, bias.arms, bias.arms[0], False))}
    check_attributes(text, label, schema, errors)
    if "answer" not in _names(text):
        errors.add(bias.extract.span, f"{label} never reads {{{{ answer }}}}: the decision would not reach the "
                   "extraction call", "put {{ answer }} where the model's decision goes")
    return compiled


def _check_extractions(compiled: CompiledBias, errors: ErrorCollector) -> None:
    """Each row's extraction prompt holds the decision's slot exactly once (a bank text could carry one)."""
    assert compiled.extract is not None
    for row in compiled.bias.rows:
        for arm in compiled.bias.arms:
            prompt = _extraction(compiled.extract, row, arm_context(row, compiled.bias.arms, arm, False))
            if prompt.count(EXTRACTION_SLOT) != 1:
                errors.add(row.span(arm), f"data file '{row.file}': row {row.number} puts "
                           f"{prompt.count(EXTRACTION_SLOT)} decision slots {EXTRACTION_SLOT} in the extraction "
                           "prompt", "the extraction template reads {{ answer }} once and no bank text may hold it")
                return


def _names(text: n.Text) -> set[str]:
    return {node.name for node in environment().parse(text.value).find_all(jnodes.Name)}


def _check_sample(compiled: CompiledBias, row: Row, errors: ErrorCollector) -> None:
    """Render one row of each condition so that misspelt attributes fail here, at the template."""
    for condition in compiled.bias.conditions:
        context = _context(row, condition, arm_context(row, compiled.bias.arms, compiled.bias.arms[0], False))
        for _, text in compiled.turns[condition.conversation.name]:
            if text is not None:
                check_render(text, context, errors)


def _check_unit_agrees(compiled: CompiledBias, condition: BiasCondition, members: list[Row],
                       errors: ErrorCollector) -> None:
    arms = compiled.bias.arms
    texts = [text for _, text in compiled.turns[condition.conversation.name] if text is not None]

    def rendered(row: Row) -> list[str]:
        return [t.render(_context(row, condition, arm_context(row, arms, arm, False))) for arm in arms for t in texts]

    first = members[0]
    theirs = rendered(first)
    for row in members[1:]:
        if rendered(row) != theirs:
            errors.add(row.span(arms[0]), f"data file '{row.file}': row {row.number} gives shared condition "
                       f"'{condition.name}' other text than row {first.number} of its unit",
                       "rows of one unit must agree on everything a shared condition reads")
            return
