"""Stage 4 for effects designs: the combinations fixed and their balance proved, `trials N per cell` drawn,
and every template rendered once for the first scenario (an error there is located at the template)."""

from __future__ import annotations

from typing import Any

from spec_audits.families.effects import crossing
from spec_audits.families.effects.design import EffectsInput
from spec_audits.families.effects.expand import CompiledEffects, pick_trials
from spec_audits.sdk import ErrorCollector, check_render


def prepare(design: EffectsInput, seed: int, errors: ErrorCollector) -> CompiledEffects | None:
    sizes = tuple(len(factor.levels) for factor in design.factors)
    names = tuple(factor.name for factor in design.factors)
    try:
        if design.crossing.kind == "full":
            runs = crossing.full(sizes)
        else:
            runs = crossing.fraction(sizes, design.crossing.runs or 0, design.crossing.seed)
        proof = crossing.prove(runs, sizes, names)
    except crossing.CrossingError as err:
        errors.add(design.crossing.span or design.span, str(err), "remove the fraction clause to ask every combination")
        return None
    if not _renders(design, runs[0], errors):
        return None
    picks = pick_trials(design, runs) if design.trials is not None else None
    record = {"kind": design.crossing.kind, **proof}
    if design.crossing.kind == "fraction":
        record["seed"] = design.crossing.seed
    return CompiledEffects(design, runs, record, picks)


def _renders(design: EffectsInput, run: crossing.Run, errors: ErrorCollector) -> bool:
    context: dict[str, Any] = {"scenario": design.scenarios[0].values, "condition": design.conditions[0].name}
    for factor, level in zip(design.factors, run, strict=True):
        context[factor.name] = factor.levels[level].context()
    texts = [design.prompt, design.system, design.correct, *(c.text for c in design.conditions)]
    return all(check_render(text, context, errors) is not None for text in texts if text is not None)
