"""Stage 3 for effects designs: the design's clauses resolved into the typed EffectsInput (design.py).

    factors age, gender, race          # the factors crossed (their levels and forms are declared once)
    items scenarios                    # the scenarios: a data source, one row each
    cross full | cross fraction        # fraction: with `sample N [seed S]`, N runs of a balanced fraction
    conditions baseline, no_bias       # baseline and named interventions (influences with a text)
    answer yesno | options "a" | "b" | scale 1..7
    prompt TEMPLATE   system TEMPLATE   samples N   trials N per cell [seed S]   decode ...   mode ...
    analysis effects reference "a60 male white", interactions "age x gender", scenarios random, alpha 0.05,
                     correct TEMPLATE
"""

from __future__ import annotations

import re
from typing import Any

from spec_audits.compiler import nodes as n
from spec_audits.compiler.check import check_domains, decode_options, first_values, is_number, is_whole
from spec_audits.compiler.data_source import key_of, read_rows
from spec_audits.compiler.errors import ErrorCollector, did_you_mean
from spec_audits.compiler.templates import CompiledText, compile_text
from spec_audits.families.effects.design import (
    BASELINE,
    Analysis,
    AnswerForm,
    Condition,
    Crossing,
    EffectsInput,
    FactorSpec,
    Level,
    Scenario,
    template_names,
)
from spec_audits.families.interface import DesignContext

CLAUSES = ("factors", "items", "cross", "sample", "conditions", "answer", "prompt", "system", "samples", "trials",
           "decode", "mode", "analysis")
MODES = ("sample", "logprob")
SCENARIO_EFFECTS = ("random", "cluster")
POSITIONS = ("system", "prepend", "append")
ANALYSIS_DOMAINS = {
    "alpha": (lambda v: is_number(v) and 0 < v < 1, "a number between 0 and 1"),
    "scenarios": (lambda v: v in SCENARIO_EFFECTS, "random (a random intercept per scenario) or cluster "
                  "(errors clustered by scenario)"),
}
_VOWELS = tuple("aeiouAEIOU")


def resolve(design: n.Design, context: DesignContext, errors: ErrorCollector) -> EffectsInput | None:
    """Check an effects design; None after reporting every problem found."""
    start = len(errors.diagnostics)
    factors = _factors(design, context, errors)
    options = dict(_analysis_options(design))
    check_domains(options.values(), ANALYSIS_DOMAINS, errors)
    if factors is not None:
        factors = _with_references(factors, options.get("reference"), errors)
    fields: dict[str, Any] = dict(
        crossing=_crossing(design, context.seed, errors), conditions=_conditions(design, context, errors),
        answer=_answer(design, errors), decode=decode_options(design, errors), mode=_mode(design, errors),
        samples=_count(design.get("samples"), errors) or 1)
    scenarios = _scenarios(design, context, errors)
    if factors is None or scenarios is None or len(errors.diagnostics) > start:
        return None
    names = template_names(factors)
    prompt = _template(design, "prompt", context, names, errors)
    system = _template(design, "system", context, names, errors) if design.get("system") else None
    correct = _correct(options.get("correct"), context, names, errors)
    analysis = Analysis(interactions=_interactions(options.get("interactions"), factors, errors),
                        scenario_effect=str(first_values(options.values()).get("scenarios", "cluster")),  # type: ignore[arg-type]
                        alpha=float(first_values(options.values()).get("alpha", 0.05)))
    trials = _trials(design, len(scenarios) * fields["samples"], context.seed, errors)
    if prompt is None or len(errors.diagnostics) > start:
        return None
    return EffectsInput(name=design.name, span=design.span, factors=factors, scenarios=scenarios, prompt=prompt,
                        system=system, correct=correct, trials=trials, analysis=analysis, **fields)


def _analysis_options(design: n.Design) -> list[tuple[str, n.Option]]:
    clause = design.get("analysis")
    return [(o.name, o) for o in (clause.value[1] if clause is not None else ())]  # type: ignore[index]


def _factors(design: n.Design, context: DesignContext, errors: ErrorCollector) -> tuple[FactorSpec, ...] | None:
    clause = design.get("factors")
    if clause is None:
        errors.add(design.span, f"effects design '{design.name}' crosses no factors", "add: factors NAME, NAME")
        return None
    selection: n.Selection = clause.value  # type: ignore[assignment]
    refs = selection.names or tuple(n.Ref(span=selection.span, name=f) for f in context.tables.factors)
    found = []
    for ref in refs:
        factor = context.tables.lookup(context.tables.factors, ref, "factor", errors)
        if factor is not None and factor.name not in context.tables.broken_factors:
            found.append(FactorSpec(factor.name, tuple(_level(lv) for lv in factor.levels), factor.levels[0].name))
    seen = [f.name for f in found]
    for ref in refs:
        if seen.count(ref.name) > 1:
            errors.add(ref.span, f"factor '{ref.name}' is crossed twice", "name each factor once")
            return None
    return tuple(found) if len(found) == len(refs) and found else None


def _level(level: n.Level) -> Level:
    forms = dict(level.forms)
    singular = forms.get("singular")
    if singular is not None:
        forms.setdefault("a_singular", ("an " if singular.startswith(_VOWELS) else "a ") + singular)
    return Level(level.name, forms)


def _with_references(factors: tuple[FactorSpec, ...], option: n.Option | None,
                     errors: ErrorCollector) -> tuple[FactorSpec, ...] | None:
    """`reference "a60 male white"`: one level of each factor (a factor not named keeps its first level)."""
    if option is None:
        return factors
    chosen: dict[str, str] = {}
    owners = {level: f for f in factors for level in f.names}
    for word in str(option.value).split():
        factor = owners.get(word)
        if factor is None:
            errors.add(option.span, f"reference level '{word}' is no level of the design's factors",
                       did_you_mean(word, list(owners)))
        elif factor.name in chosen:
            errors.add(option.span, f"the reference names two levels of factor '{factor.name}': "
                       f"'{chosen[factor.name]}' and '{word}'", "name one level per factor")
        else:
            chosen[factor.name] = word
    return tuple(FactorSpec(f.name, f.levels, chosen.get(f.name, f.reference)) for f in factors)


def _interactions(option: n.Option | None, factors: tuple[FactorSpec, ...],
                  errors: ErrorCollector) -> tuple[tuple[str, str], ...]:
    """`interactions "age x gender, gender x race"`: pairs of two different declared factors."""
    if option is None:
        return ()
    names = [f.name for f in factors]
    pairs: list[tuple[str, str]] = []
    for part in str(option.value).split(","):
        terms = [t for t in re.split(r"\s*x\s*", part.strip()) if t]
        unknown = [t for t in terms if t not in names]
        for term in unknown:
            errors.add(option.span, f"interaction over '{term}', which is no factor of this design",
                       did_you_mean(term, names))
        if unknown:
            continue
        if len(terms) != 2 or terms[0] == terms[1]:
            errors.add(option.span, f"an interaction is between two different factors, got '{part.strip()}'",
                       "write: interactions \"age x gender\"")
        else:
            pairs.append((terms[0], terms[1]))
    return tuple(pairs)


def _crossing(design: n.Design, seed: int, errors: ErrorCollector) -> Crossing:
    cross, sample = design.get("cross"), design.get("sample")
    kind = cross.value.name if cross is not None else "full"  # type: ignore[union-attr]
    if kind not in ("full", "fraction"):
        errors.add(cross.span, f"unknown crossing '{kind}'",  # type: ignore[union-attr]
                   did_you_mean(kind, ["full", "fraction"]) or "write: cross full | cross fraction")
        return Crossing("full")
    if kind == "fraction" and sample is None:
        errors.add(cross.span, "a fraction needs its size", "add: sample N [seed S]")  # type: ignore[union-attr]
    if kind == "full" and sample is not None:
        errors.add(sample.span, "'sample' sizes a fraction; a full cross takes every combination",
                   "write: cross fraction, or remove the sample clause")
    runs, fraction_seed = sample.value if sample is not None else (None, None)  # type: ignore[misc]
    return Crossing(kind, runs, seed if fraction_seed is None else fraction_seed,  # type: ignore[arg-type]
                    span=cross.span if cross is not None else design.span)


def _conditions(design: n.Design, context: DesignContext, errors: ErrorCollector) -> tuple[Condition, ...]:
    """`baseline` and named interventions: each an influence with a system, prepend or append text."""
    clause = design.get("conditions")
    refs: tuple[n.ConditionRef, ...] = clause.value if clause is not None else ()  # type: ignore[assignment]
    found = []
    for ref in refs or (n.ConditionRef(span=design.span, name=BASELINE),):
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
        errors.add(influence.position.span, f"intervention '{ref.name}' is placed {influence.position.kind}",
                   "an intervention is a system, prepend or append text")
        return Condition(ref.name)
    return Condition(ref.name, compile_text(influence.text, f"intervention '{ref.name}'", set(), errors) or None,
                     influence.position.kind)


def _answer(design: n.Design, errors: ErrorCollector) -> AnswerForm:
    clause = design.get("answer")
    if clause is None:
        return AnswerForm.yesno()
    spec: n.AnswerSpec = clause.value  # type: ignore[assignment]
    if spec.kind == "scale":
        if spec.low is None or spec.high is None or spec.high <= spec.low:
            errors.add(spec.span, f"a scale runs from a lower to a higher number, got {spec.low}..{spec.high}")
            return AnswerForm.yesno()
        return AnswerForm.scale(spec.low, spec.high)
    if spec.kind == "options":
        if len(set(spec.tokens)) != len(spec.tokens) or len(spec.tokens) < 2:
            errors.add(spec.span, "options need two or more different tokens", 'write: options "a" | "b"')
        return AnswerForm("options", spec.tokens)
    return AnswerForm.yesno()


def _mode(design: n.Design, errors: ErrorCollector) -> str:
    clause = design.get("mode")
    mode = clause.value.name if clause is not None else "sample"  # type: ignore[union-attr]
    if mode not in MODES:
        errors.add(clause.span, f"unknown mode '{mode}'", did_you_mean(mode, MODES))  # type: ignore[union-attr]
    return mode


def _count(clause: n.Clause | None, errors: ErrorCollector) -> int | None:
    if clause is None:
        return None
    value = clause.value.count if isinstance(clause.value, n.Samples) else clause.value[0]  # type: ignore[index]
    if not is_whole(value) or value < 1:
        errors.add(clause.span, f"{clause.keyword} must be a whole number >= 1, got {value!r}")
        return None
    return int(value)


def _trials(design: n.Design, per_cell: int, seed: int, errors: ErrorCollector) -> tuple[int, int] | None:
    clause = design.get("trials")
    count = _count(clause, errors)
    if clause is None or count is None:
        return None
    if count > per_cell:
        errors.add(clause.span, f"trials {count} per cell, but a cell has {per_cell} (scenarios x samples)",
                   f"ask for at most {per_cell}")
        return None
    drawn_seed = clause.value[1]  # type: ignore[index]
    return count, seed if drawn_seed is None else int(drawn_seed)


def _scenarios(design: n.Design, context: DesignContext, errors: ErrorCollector) -> tuple[Scenario, ...] | None:
    clause = design.get("items")
    if clause is None:
        errors.add(design.span, f"effects design '{design.name}' names no scenarios", "add: items DATA")
        return None
    source = context.tables.lookup({d.name: d for d in context.spec.data}, clause.value, "data source", errors)
    if source is None:
        return None
    if not source.key:
        errors.add(source.span, f"data source '{source.name}' has no key", "add: key COLUMN")
        return None
    rows = read_rows(source, tuple(source.key), context.seed, errors)
    return None if rows is None else tuple(Scenario(key_of(source, row), dict(row)) for row in rows)


def _template(design: n.Design, keyword: str, context: DesignContext, names: set[str],
              errors: ErrorCollector) -> CompiledText | None:
    clause = design.get(keyword)
    if clause is None:
        errors.add(design.span, f"effects design '{design.name}' names no {keyword} template", f"add: {keyword} NAME")
        return None
    text = context.tables.lookup(context.tables.texts, clause.value, "template", errors)
    return None if text is None else compile_text(text.text, f"template '{text.name}'", names, errors)


def _correct(option: n.Option | None, context: DesignContext, names: set[str],
             errors: ErrorCollector) -> CompiledText | None:
    if option is None:
        return None
    ref = n.Ref(span=option.span, name=str(option.value))
    text = context.tables.lookup(context.tables.texts, ref, "template", errors)
    return None if text is None else compile_text(text.text, f"template '{text.name}'", names, errors)

