"""Stage 3 for effects designs: the design's clauses resolved into the typed EffectsInput (design.py).

    cross age x gender x race          # the factors crossed (levels and forms are declared once, as factors)
    fraction 9 [seed S]                # optional: a balanced fraction of 9 combinations instead of all
    reference age = a60, gender = man  # a factor not named keeps its first level
    items scenarios                    # the scenarios: a data source, one row each
    conditions baseline, no_bias       # baseline and named interventions (influences with a text)
    answer yesno | options "a" | "b" | scale 1..7 | number 0..100
    interactions age x gender          # the regression's interactions
    correct TEMPLATE [as NAME]         # renders each stimulus's target token: outcomes correct/incorrect
                                       #   (NAME/not_NAME with `as NAME`)
    prompt TEMPLATE   system TEMPLATE   samples N   trials N per cell [seed S]   decode ...   mode ...
    analysis effects scenarios random | cluster, alpha 0.05
"""

from __future__ import annotations

from typing import Any

from spec_audits.families.effects.clauses import CORRECT, CROSS, FRACTION, INTERACTIONS, ITEMS, REFERENCE, TRIALS
from spec_audits.families.effects.design import (
    BASELINE,
    INCORRECT,
    SCORER_COLUMNS,
    Analysis,
    AnswerForm,
    Condition,
    Crossing,
    EffectsInput,
    FactorSpec,
    Level,
    Scenario,
    scorer_column,
    template_names,
)
from spec_audits.families.effects.design import CORRECT as CORRECT_OUTCOME
from spec_audits.sdk import (
    CompiledText,
    DesignContext,
    Domain,
    ErrorCollector,
    TypedDesign,
    cell_keys,
    check_domains,
    compile_text,
    did_you_mean,
    is_number,
    key_of,
    read_rows,
)
from spec_audits.sdk import nodes as n

CLAUSES = ("cross", "fraction", "reference", "interactions", "items", "conditions", "answer", "correct", "prompt",
           "system", "samples", "trials", "decode", "mode", "analysis")
MODES = ("sample", "logprob")
SCENARIO_EFFECTS = ("random", "cluster")
POSITIONS = ("system", "prepend", "append")
ANALYSIS_DOMAINS: dict[str, Domain] = {
    "alpha": (lambda v: is_number(v) and 0 < v < 1, "a number between 0 and 1"),
    "scenarios": (lambda v: v in SCENARIO_EFFECTS, "random (a random intercept per scenario) or cluster "
                  "(errors clustered by scenario)"),
}
_VOWELS = tuple("aeiouAEIOU")


def resolve(design: TypedDesign, context: DesignContext, errors: ErrorCollector) -> EffectsInput | None:
    """Check an effects design; None after reporting every problem found."""
    start = len(errors.diagnostics)
    values = design.analysis.values if design.analysis is not None else {}
    check_domains(design.analysis.options if design.analysis is not None else (), ANALYSIS_DOMAINS, errors)
    factors = _factors(design, context, errors)
    analysis = Analysis(interactions=_interactions(design, factors or (), errors),
                        scenario_effect=values.get("scenarios", "cluster"), alpha=float(values.get("alpha", 0.05)))
    fields: dict[str, Any] = dict(
        crossing=_crossing(design, context.seed), conditions=_conditions(design, context, errors),
        answer=_answer(design, errors), decode=design.decode, mode=_mode(design, errors),
        samples=_samples(design, errors))
    scenarios = _scenarios(design, context, errors)
    _compares(design, factors, fields["conditions"], errors)
    if factors is None or scenarios is None or len(errors.diagnostics) > start:
        return None
    names = template_names(factors)
    prompt = _template(design, design.prompt, "prompt", context, names, errors)
    system = _template(design, design.system, "system", context, names, errors) if design.system else None
    target = design.get(CORRECT)
    correct = _template(design, target[0], "correct", context, names, errors) if target is not None else None
    trials = _trials(design, len(scenarios) * fields["samples"], context.seed, errors)
    if prompt is None or len(errors.diagnostics) > start:
        return None
    _read_factors(design, factors, (prompt, system, correct), _turns_read(design, context), errors)
    if len(errors.diagnostics) > start:
        return None
    return EffectsInput(name=design.name, span=design.span, factors=factors, scenarios=scenarios, prompt=prompt,
                        system=system, correct=correct, trials=trials, analysis=analysis,
                        outcome=_outcome(target[1] if target is not None else None, errors), **fields)


def _factors(design: TypedDesign, context: DesignContext, errors: ErrorCollector) -> tuple[FactorSpec, ...] | None:
    """The crossed factors, each with its reference level."""
    axes = design.get(CROSS)
    if axes is None:  # conditions only: the interventions against the baseline (checked in _compares)
        return ()
    found: dict[str, FactorSpec] = {}
    for axis in axes:
        factor = context.tables.lookup(context.tables.factors, n.Ref(span=axis.span, name=axis.name), "factor",
                                       errors)
        if axis.count is not None or axis.values:
            errors.add(axis.span, f"cross names factors, and '{axis.name}' comes with a count or values",
                       "declare the levels in the factor and write: cross FACTOR x FACTOR")
        elif axis.name in found:
            errors.add(axis.span, f"factor '{axis.name}' is crossed twice", "name each factor once")
        elif scorer_column(axis.name):
            errors.add(axis.span, f"factor '{axis.name}' has the name of a column the scorer keeps "
                       f"({', '.join(SCORER_COLUMNS)}, y_OUTCOME)", "rename the factor")
        elif factor is not None and factor.name not in context.tables.broken_factors:
            found[axis.name] = FactorSpec(factor.name, tuple(_level(lv) for lv in factor.levels),
                                          factor.levels[0].name)
    if len(found) != len(axes):
        return None
    return _with_references(tuple(found.values()), design, errors)


def _compares(design: TypedDesign, factors: tuple[FactorSpec, ...] | None, conditions: tuple[Condition, ...],
              errors: ErrorCollector) -> None:
    """A design with no factors compares its conditions: it needs the baseline and an intervention."""
    if factors == () and (len(conditions) < 2 or BASELINE not in {c.name for c in conditions}):
        errors.add(design.span, f"effects design '{design.name}' crosses no factors and compares no conditions",
                   "add: cross FACTOR x FACTOR, or conditions baseline, INTERVENTION")


def _outcome(ref: n.Ref | None, errors: ErrorCollector) -> str:
    """`correct TEMPLATE as NAME`: the target outcome's name (`correct` without `as`)."""
    if ref is None:
        return CORRECT_OUTCOME
    if ref.name in ("value", INCORRECT) or ref.name.startswith("not_"):
        errors.add(ref.span, f"'{ref.name}' cannot name the target outcome (value, incorrect and not_... name "
                   "other outcomes)", "name it e.g. `as sycophantic`")
    return ref.name


def _turns_read(design: TypedDesign, context: DesignContext) -> set[str]:
    """The factors the design's conversation fills into its turns ({{ cell.KEY }})."""
    node = context.tables.conversations.get(design.conversation.name) if design.conversation is not None else None
    return cell_keys(node) if node is not None else set()


def _read_factors(design: TypedDesign, factors: tuple[FactorSpec, ...], texts: tuple[CompiledText | None, ...],
                  turns: set[str], errors: ErrorCollector) -> None:
    """A crossed factor that no template reads gives every level the same prompt: its contrasts would measure
    nothing but noise, so it is an error at its name in `cross`."""
    read = set().union(turns, *(text.names for text in texts if text is not None))
    for axis in design.get(CROSS) or ():
        if axis.name not in read and any(f.name == axis.name for f in factors):
            errors.add(axis.span, f"factor '{axis.name}' is crossed but no template of effects design "
                       f"'{design.name}' reads it, so its levels would all get the same prompt",
                       f"write {{{{ {axis.name} }}}} (or a form, {{{{ {axis.name}.plural }}}}) in the prompt or "
                       "system template, or leave it out of cross")


def _level(level: n.Level) -> Level:
    forms = dict(level.forms)
    singular = forms.get("singular")
    if singular is not None:
        forms.setdefault("a_singular", ("an " if singular.startswith(_VOWELS) else "a ") + singular)
    return Level(level.name, forms)


def _with_references(factors: tuple[FactorSpec, ...], design: TypedDesign,
                     errors: ErrorCollector) -> tuple[FactorSpec, ...] | None:
    """`reference age = a60, gender = man`: the level each factor is compared with (else its first level)."""
    chosen: dict[str, str] = {}
    by_name = {f.name: f for f in factors}
    start = len(errors.diagnostics)
    for factor_ref, level_ref in design.get(REFERENCE) or ():
        factor = by_name.get(factor_ref.name)
        if factor is None:
            errors.add(factor_ref.span, f"reference for '{factor_ref.name}', which this design does not cross",
                       did_you_mean(factor_ref.name, by_name))
        elif factor.name in chosen:
            errors.add(factor_ref.span, f"a second reference for factor '{factor.name}'", "name one level per factor")
        elif level_ref.name not in factor.names:
            errors.add(level_ref.span, f"reference level '{level_ref.name}' is no level of factor '{factor.name}'",
                       did_you_mean(level_ref.name, factor.names))
        else:
            chosen[factor.name] = level_ref.name
    if len(errors.diagnostics) > start:
        return None
    return tuple(FactorSpec(f.name, f.levels, chosen.get(f.name, f.reference)) for f in factors)


def _interactions(design: TypedDesign, factors: tuple[FactorSpec, ...],
                  errors: ErrorCollector) -> tuple[tuple[str, str], ...]:
    """`interactions age x gender, ...`: pairs of two different crossed factors."""
    names = [f.name for f in factors]
    pairs: list[tuple[str, str]] = []
    for first, second in design.get(INTERACTIONS) or ():
        unknown = [ref for ref in (first, second) if ref.name not in names]
        for ref in unknown:
            errors.add(ref.span, f"interaction over '{ref.name}', which this design does not cross",
                       did_you_mean(ref.name, names))
        if first.name == second.name and not unknown:
            errors.add(second.span, f"an interaction is between two different factors, got '{first.name} x "
                       f"{second.name}'", "write: interactions age x gender")
        elif not unknown:
            pairs.append((first.name, second.name))
    return tuple(pairs)


def _crossing(design: TypedDesign, seed: int) -> Crossing:
    fraction, clause = design.get(FRACTION), design.clause(FRACTION.keyword)
    if fraction is None or clause is None:
        return Crossing("full")
    runs, fraction_seed = fraction
    return Crossing("fraction", runs, seed if fraction_seed is None else fraction_seed, span=clause.span)


def _conditions(design: TypedDesign, context: DesignContext, errors: ErrorCollector) -> tuple[Condition, ...]:
    """`baseline` and named interventions: each an influence with a system, prepend or append text."""
    found = []
    for ref in design.conditions or (n.ConditionRef(span=design.span, name=BASELINE),):
        if ref.toward is not None or ref.args or ref.shared:
            errors.add(ref.span, f"an effects condition is baseline or an intervention's name, got '{ref.key}'",
                       "declare the intervention as `influence NAME append \"...\"` and list its name")
        elif ref.name == BASELINE:
            found.append(Condition(BASELINE))
        else:
            found.append(_intervention(ref, context, errors))
    return tuple(found)


def _intervention(ref: n.ConditionRef, context: DesignContext, errors: ErrorCollector) -> Condition:
    influence = context.tables.lookup(context.tables.influences, n.Ref(span=ref.span, name=ref.name),
                                      "intervention (influence)", errors)
    if influence is None or influence.text is None:
        return Condition(ref.name)
    if influence.position.kind not in POSITIONS:
        errors.add(ref.span, f"intervention '{ref.name}' is placed {influence.position.kind}",
                   "an intervention is a system, prepend or append text")
        return Condition(ref.name)
    return Condition(ref.name, compile_text(influence.text, f"intervention '{ref.name}'", set(), errors),
                     influence.position.kind)


def _answer(design: TypedDesign, errors: ErrorCollector) -> AnswerForm:
    spec = design.answer
    if spec is None or spec.kind == "yesno":
        return AnswerForm.yesno()
    if spec.kind in ("scale", "number"):
        low, high = spec.low or 0, spec.high or 0
        if high <= low:
            errors.add(spec.span, f"a {spec.kind} runs from a lower to a higher whole number, got {low}..{high}")
            return AnswerForm.yesno()
        return AnswerForm.scale(low, high, spec.kind)
    if len(set(spec.tokens)) != len(spec.tokens) or len(spec.tokens) < 2:
        errors.add(spec.span, "options need two or more different tokens", 'write: options "a" | "b"')
    return AnswerForm("options", spec.tokens)


def _mode(design: TypedDesign, errors: ErrorCollector) -> str:
    if design.mode is None:
        return "sample"
    if design.mode.name not in MODES:
        errors.add(design.mode.span, f"unknown mode '{design.mode.name}'", did_you_mean(design.mode.name, MODES))
    return design.mode.name


def _samples(design: TypedDesign, errors: ErrorCollector) -> int:
    samples = design.samples
    if samples is None:
        return 1
    if samples.split_by is not None:
        errors.add(samples.span, "an effects design has no display orders to split samples by",
                   "write: samples N")
    if samples.count < 1:
        errors.add(samples.span, f"samples must be a whole number >= 1, got {samples.count}")
    return max(samples.count, 1)


def _trials(design: TypedDesign, per_cell: int, seed: int, errors: ErrorCollector) -> tuple[int, int] | None:
    trials, clause = design.get(TRIALS), design.clause(TRIALS.keyword)
    if trials is None or clause is None:
        return None
    count, drawn_seed = trials
    if not 1 <= count <= per_cell:
        errors.add(clause.span, f"trials {count} per cell, but a cell has {per_cell} (scenarios x samples)",
                   f"ask for 1 to {per_cell}")
        return None
    return count, seed if drawn_seed is None else drawn_seed


def _scenarios(design: TypedDesign, context: DesignContext, errors: ErrorCollector) -> tuple[Scenario, ...] | None:
    ref = design.get(ITEMS)
    if ref is None:
        errors.add(design.span, f"effects design '{design.name}' names no scenarios", "add: items DATA")
        return None
    source = context.tables.lookup({d.name: d for d in context.spec.data}, ref, "data source", errors)
    if source is None:
        return None
    if not source.key:
        errors.add(source.span, f"data source '{source.name}' has no key", "add: key COLUMN")
        return None
    rows = read_rows(source, tuple(source.key), context.seed, errors)
    return None if rows is None else tuple(Scenario(key_of(source, row), dict(row)) for row in rows)


def _template(design: TypedDesign, ref: n.Ref | None, keyword: str, context: DesignContext, names: set[str],
              errors: ErrorCollector) -> CompiledText | None:
    if ref is None:
        errors.add(design.span, f"effects design '{design.name}' names no {keyword} template", f"add: {keyword} NAME")
        return None
    text = context.tables.lookup(context.tables.texts, ref, "template", errors)
    return None if text is None else compile_text(text.text, f"template '{text.name}'", names, errors)
