"""Stage 3 for conditional cognitive-bias designs (seed 004): clauses resolved, the bank read and checked.

```
design conditional_bias:
  over bank
  unit bias, scenario_id
  arms control, treatment
  conditions zero_shot(no_turn) shared, neutral_turn(with_turn, turn = row.neutral_message) shared,
             biased_turn(with_turn, turn = row.human_message)
  answer numbered arm.options
  protocol authors extract extract_option      # or: protocol paper
  analysis bias_decomposition params metric_params, target bias, human human_bias, matrix_order "A|B|..."
```
Each condition names the conversation it is played in and binds the names that conversation reads.
Each arm names a bank column parsed `as test_case`; `params` a column parsed `as pydict`.
The protocol is how the decision is asked and read: `authors` (their code) gives each arm its own
acknowledgment, asks for a free decision and reads it with a second, extraction call (the named template,
which reads `answer`), options never reversed; `paper` shares one acknowledgment per unit between the
arms, parses the decision itself and reverses the options of half the units. `reverse` overrides either.
"""

from __future__ import annotations

from typing import Any

from spec_audits.families.cognitive_bias.clauses import ARMS, OVER, PROTOCOL, REVERSE, UNIT
from spec_audits.sdk import (
    DesignContext,
    ErrorCollector,
    Record,
    Row,
    TypedDesign,
    checked_decode,
    did_you_mean,
    read_rows,
)
from spec_audits.sdk import nodes as n

ANALYSIS = "bias_decomposition"
CLAUSES = ("over", "unit", "arms", "conditions", "answer", "protocol", "reverse", "decode", "analysis")
PROTOCOLS = {"authors": 0.0, "paper": 0.5}  # protocol -> its reversal probability (per unit and arm)
METRIC_KEYS = ("k", "x_1", "x_2", "flip_treatment")
REVERSE_BY = ("unit", "arm", "condition", "row")
CONDITIONS = ("zero_shot", "neutral_turn", "biased_turn")  # m0, m_n, m_b of the paper: the scorer reads these
DID_VARIANTS = ("abs", "authors")
LIST_OPTIONS = ("matrix_order", "psm_covariates", "scm_covariates")
ANALYSIS_OPTIONS = ("params", "target", "human", *LIST_OPTIONS, "did")


class BiasCondition(Record):
    """One condition: the conversation it is played in, the names it binds, shared per unit or per row."""

    name: str
    conversation: n.Conversation
    bindings: dict[str, str]  # name the conversation reads -> bank column
    shared: bool
    span: Any


class BiasDesign(Record):
    """A conditional-bias design, resolved: bank rows read and checked, every name at its declaration."""

    design: n.Design
    source: n.DataSource
    rows: list[Row]
    unit: tuple[str, ...]
    arms: tuple[str, ...]
    conditions: tuple[BiasCondition, ...]
    templates: dict[str, n.TemplateDef]
    answer: n.AnswerSpec
    protocol: str
    extract: n.TemplateDef | None  # the authors' extraction prompt; None under the paper's protocol
    reverse: tuple[float, tuple[str, ...]]
    decode: dict[str, Any]
    analysis: dict[str, Any]


def resolve_bias(design: TypedDesign, context: DesignContext, errors: ErrorCollector) -> BiasDesign | None:
    """Check every clause and read the bank; None after reporting every problem found."""
    before = len(errors.diagnostics)
    for keyword in ("over", "unit", "arms", "conditions", "answer", "protocol", "analysis"):
        if design.clause(keyword) is None:
            errors.add(design.span, f"conditional-bias design '{design.name}' has no '{keyword}' clause",
                       "see specs/cognitive_bias.spec")
    source = _source(design, context.spec, errors)
    conditions = _conditions(design, context, errors)
    answer = _answer(design, errors)
    protocol, extract = _protocol(design, context, errors)
    reverse = _reverse(design, protocol, errors)
    analysis = _analysis(design, errors)
    decode = design.decode
    if len(errors.diagnostics) > before or source is None or answer is None:
        return None
    unit = tuple(ref.name for ref in design.get(UNIT) or ())
    arms = tuple(ref.name for ref in design.get(ARMS) or ())
    required = (*unit, *{b for c in conditions for b in c.bindings.values()}, analysis["target"], analysis["human"])
    rows = read_rows(source, required, context.seed, errors)
    if rows is None or not _bank_ok(source, rows, arms, analysis, design, errors):
        return None
    return BiasDesign(design.node, source, rows, unit, arms, conditions, dict(context.tables.texts), answer, protocol,
                      extract, reverse, decode, {**analysis, "arms": list(arms), "protocol": protocol})


def _source(design: TypedDesign, spec: n.Spec, errors: ErrorCollector) -> n.DataSource | None:
    clause, axes = design.clause(OVER.keyword), design.get(OVER)
    if clause is None or axes is None:
        return None
    sources = {d.name: d for d in spec.data}
    if len(axes) != 1 or axes[0].name not in sources:
        errors.add(clause.span, "'over' must name the one data source of bank rows",
                   did_you_mean(axes[0].name, sources) if axes else None)
        return None
    return sources[axes[0].name]


def _conditions(design: TypedDesign, context: DesignContext, errors: ErrorCollector) -> tuple[BiasCondition, ...]:
    refs = design.conditions or ()
    out, seen, checked = [], set(), set()
    for ref in refs:
        if ref.key in seen:
            errors.add(ref.span, f"condition '{ref.key}' is listed twice")
        seen.add(ref.key)
        if len(ref.args) != 1 or ref.toward is not None:
            errors.add(ref.span, f"condition '{ref.key}' must name the conversation it is played in",
                       f"write: {ref.name}(CONVERSATION, name = row.COLUMN)")
            continue
        conversation = context.tables.lookup(context.tables.conversations, n.Ref(span=ref.span, name=str(ref.args[0])),
                                             "conversation", errors)
        bindings = {name: _column(value, errors) for name, value in ref.bindings.items()}
        if conversation is not None and conversation.name not in checked:
            checked.add(conversation.name)
            _check_turns(conversation, context, errors)
        columns = {name: column for name, column in bindings.items() if column is not None}
        if conversation is not None and len(columns) == len(bindings):
            out.append(BiasCondition(ref.key, conversation, columns, ref.shared, ref.span))
    return tuple(out)


def _column(value: n.Name, errors: ErrorCollector) -> str | None:
    if len(value.parts) != 2 or value.parts[0] != "row":
        errors.add(value.span, f"a condition binds a bank column, written row.COLUMN; got '{value.dotted}'")
        return None
    return value.parts[1]


def _check_turns(conversation: n.Conversation, context: DesignContext, errors: ErrorCollector) -> None:
    if not conversation.turns or conversation.turns[-1].role != "user":
        errors.add(conversation.span, f"conversation '{conversation.name}' must end with the user turn that asks "
                   "for the decision")
    for turn in conversation.turns:
        if turn.template is not None:
            context.tables.lookup(context.tables.texts, turn.template, "template", errors)
        if turn.generate and turn.role != "assistant":
            errors.add(turn.span, "only an assistant turn can be generated")
        checked_decode(turn.decode, errors)  # a turn's decode settings, checked as a design's are


def _answer(design: TypedDesign, errors: ErrorCollector) -> n.AnswerSpec | None:
    spec = design.answer
    if spec is None:
        return None
    if spec.source is None:  # another form: reported by the shared checks from the family's declaration
        return None
    if spec.source.dotted != "arm.options":
        errors.add(spec.source.span, f"unknown option list '{spec.source.dotted}'", "the arm's options: arm.options")
        return None
    return spec


def _protocol(design: TypedDesign, context: DesignContext,
              errors: ErrorCollector) -> tuple[str, n.TemplateDef | None]:
    """`protocol authors extract TEMPLATE` or `protocol paper`; ("authors", None) after an error."""
    clause, value = design.clause(PROTOCOL.keyword), design.get(PROTOCOL)
    if clause is None or value is None:
        return "authors", None
    name, template = value
    if name.name not in PROTOCOLS:
        errors.add(name.span, f"unknown protocol '{name.name}'", did_you_mean(name.name, PROTOCOLS))
        return "authors", None
    if name.name == "paper" and template is not None:
        errors.add(template.span, "the paper's protocol parses the decision itself: it has no extraction call",
                   "write: protocol paper, or protocol authors extract TEMPLATE")
    if name.name == "authors" and template is None:
        errors.add(clause.span, "the authors' protocol reads the decision with an extraction call",
                   "write: protocol authors extract TEMPLATE (a template that reads {{ answer }})")
    found = context.tables.lookup(context.tables.texts, template, "template", errors) if template else None
    return name.name, found if name.name == "authors" else None


def _reverse(design: TypedDesign, protocol: str, errors: ErrorCollector) -> tuple[float, tuple[str, ...]]:
    clause, value = design.clause(REVERSE.keyword), design.get(REVERSE)
    if clause is None or value is None:
        return (PROTOCOLS[protocol], ("unit", "arm"))
    probability, by = value
    if not 0 <= probability <= 1:
        errors.add(clause.span, f"reverse takes a probability between 0 and 1, got {probability}")
    for ref in by:
        if ref.name not in REVERSE_BY:
            errors.add(ref.span, f"cannot draw a reversal per '{ref.name}'", did_you_mean(ref.name, REVERSE_BY))
    return (float(probability), tuple(ref.name for ref in by) or ("unit", "arm"))


def _analysis(design: TypedDesign, errors: ErrorCollector) -> dict[str, Any]:
    if design.analysis is None:
        return {}
    clause, options = design.analysis, design.analysis.options
    out: dict[str, Any] = {"family": ANALYSIS, "params": "metric_params", "target": "bias", "human": "human_bias",
                           "did": "abs"}
    for option in options:  # an unknown key is reported by the shared checks from the family's declaration
        if option.name not in ANALYSIS_OPTIONS:
            continue
        if option.name == "did" and option.value not in DID_VARIANTS:
            errors.add(option.span, f"unknown DiD variant '{option.value}'", did_you_mean(str(option.value),
                                                                                         DID_VARIANTS))
        out[option.name] = str(option.value).split("|") if option.name in LIST_OPTIONS else option.value
    if not out.get("matrix_order"):
        errors.add(clause.span, "the analysis needs matrix_order: the bias names, in the matrix's order",
                   'add: matrix_order "Anchoring|Framing Effect|..."')
    return out


def _bank_ok(source: n.DataSource, rows: list[Row], arms: tuple[str, ...], analysis: dict[str, Any],
             design: TypedDesign, errors: ErrorCollector) -> bool:
    """Every bank row names known biases, carries its metric parameters, and parses its arms as test cases."""
    before = len(errors.diagnostics)
    arms_clause = design.clause(ARMS.keyword)
    if len(arms) != 2:
        errors.add(arms_clause.span if arms_clause else design.span, "a design has two arms: control, treatment")
    for column in (*arms, analysis["params"]):
        if column not in source.parse:
            fmt = "pydict" if column == analysis["params"] else "test_case"
            errors.add(source.span, f"data '{source.name}': column '{column}' is read but not parsed",
                       f"add: parse {column} as {fmt}")
    if len(errors.diagnostics) > before:
        return False
    order = analysis["matrix_order"]
    for row in rows:
        for column in (analysis["target"], analysis["human"]):
            if row[column] not in order:
                errors.add(row.span(column), f"{row.where(column)}: unknown bias '{row[column]}'",
                           did_you_mean(row[column], order))
        _check_params(row, analysis["params"], errors)
        counts = {len(row[arm]["options"]) for arm in arms}
        if len(counts) != 1:
            errors.add(row.span(arms[1]), f"{row.where(arms[1])}: the arms have {' and '.join(map(str, counts))} "
                       "answer options; both arms must offer the same number")
    return len(errors.diagnostics) == before


def _check_params(row: Row, column: str, errors: ErrorCollector) -> None:
    params = row[column]
    if not isinstance(params, dict):
        errors.add(row.span(column), f"{row.where(column)}: metric parameters must be a dict, "
                   f"got {type(params).__name__}")
        return
    for key in METRIC_KEYS:
        if key not in params:
            errors.add(row.span(column), f"{row.where(column)}: missing metric parameter '{key}'",
                       "every row needs k, x_1, x_2 and flip_treatment")
