"""Stage 4 for influence designs: compile templates, fix comparisons, prove balance, render a sample."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from typing import Any

from spec_audits.families.influence.check import PairsDesign
from spec_audits.families.influence.expand import CompiledPairs, allowed_pairs, side, sides
from spec_audits.families.influence.followups import compile_followups
from spec_audits.sdk import (
    CompiledText,
    ErrorCollector,
    Span,
    check_render,
    compile_text,
    did_you_mean,
    evaluate,
    item_rng,
    names,
    resolves,
)
from spec_audits.sdk import nodes as n

CUE_NAMES = {"target", "other", "first", "second", "factor"}
PROMPT_NAMES = {"first", "second", "factor"}
FILTER_NAMES = {"n_A", "n_B", "factor"}


def prepare(design: PairsDesign, seed: int, errors: ErrorCollector) -> CompiledPairs | None:
    """Compile templates, check them on a sample stimulus, fix comparisons and prove balance."""
    start = len(errors.diagnostics)
    prompt, system, cues = compile_texts(design, PROMPT_NAMES, CUE_NAMES, errors)
    before = len(errors.diagnostics)
    _check_filter_names(design, errors)
    _check_turns_names(design, errors)
    if len(errors.diagnostics) > before:
        return None
    comparisons = {f.name: _comparisons(design, f, seed, errors) for f in design.factors}
    if len({len(c) for c in comparisons.values()}) > 1 and len(errors.diagnostics) == start:
        counts = ", ".join(f"{name}: {len(c)}" for name, c in comparisons.items())
        errors.add(design.design.span, f"design '{design.name}' cannot be balanced: its factors get different "
                   f"numbers of size pairs ({counts})", "use the same filter for every factor")
    if len(errors.diagnostics) > start or prompt is None:
        return None
    compiled = CompiledPairs(design, seed, prompt, system, cues, None, comparisons)
    _check_sample_render(compiled, errors)
    compiled.followups = compile_followups(design.followups, PROMPT_NAMES, next(_sample_contexts(compiled)), errors)
    _check_turn_counts(compiled, errors)
    if design.trials is not None:
        from spec_audits.families.influence.trials import pick_trials  # only a design with `trials N per cell`

        slots = {factor: [(a, b, order) for a, b in pairs for order in design.orders]
                 for factor, pairs in comparisons.items()}
        compiled.picks = pick_trials(design, seed, ("n_A", "n_B", "order"), slots,
                                     {factor: f"factor '{factor}'" for factor in slots}, errors)
    return None if len(errors.diagnostics) > start else compiled


def compile_texts(design: Any, prompt_names: set[str], cue_names: set[str], errors: ErrorCollector) -> tuple[
        CompiledText | None, CompiledText | None, dict[str, CompiledText]]:
    """The design's prompt, system prompt and cue texts compiled (a failed one reported and left out)."""
    prompt = compile_text(design.prompt.text, f"template '{design.prompt.name}'", prompt_names, errors)
    system = None
    if design.system is not None:
        system = compile_text(design.system.text, f"system '{design.system.name}'", prompt_names, errors)
    cues = {inf.name: compile_text(inf.text, f"influence '{inf.name}'", cue_names, errors)
            for inf in design.influences if inf.text is not None}
    return prompt, system, {name: cue for name, cue in cues.items() if cue is not None}


def _check_filter_names(design: PairsDesign, errors: ErrorCollector) -> None:
    if design.where is None:
        return
    context = {k: 0 for k in FILTER_NAMES}
    for name in names(design.where):
        missing = resolves(name, context)
        if missing is not None:
            errors.add(name.span, f"unknown name '{name.dotted}' in the design filter",
                       f"a filter can use {', '.join(sorted(FILTER_NAMES))}")


def _check_turns_names(design: PairsDesign, errors: ErrorCollector) -> None:
    probe = {"target": side({"plural": "", "name": ""}, "A", 1, "A"),
             "other": side({"plural": "", "name": ""}, "B", 2, "B"), "factor": ""}
    for inf in design.influences:
        pos = inf.position
        if pos.kind != "turns":
            continue
        for expr in (pos.where, pos.answer):
            for name in names(expr) if expr is not None else ():
                missing = resolves(name, probe)
                if missing is not None:
                    errors.add(name.span, f"unknown name '{name.dotted}' in influence '{inf.name}'",
                               _hint(missing, name, probe))


def _hint(missing: str, name: n.Name, context: dict[str, Any]) -> str | None:
    scope = context if name.parts[0] == missing else context.get(name.parts[0], {})
    return did_you_mean(missing, scope)


def _span_of(design: PairsDesign, keyword: str) -> Span:
    """Where the design writes a clause it has (the design itself, should it not)."""
    clause = design.design.get(keyword)
    return clause.span if clause is not None else design.design.span


def _comparisons(design: PairsDesign, factor: n.Factor, seed: int,
                 errors: ErrorCollector) -> list[tuple[int, int]]:
    ranges = {axis.name: range(axis.low, axis.high + 1) for axis in design.sizes}
    try:
        pairs = [(a, b) for a in ranges["n_A"] for b in ranges["n_B"]
                 if design.where is None or evaluate(design.where, {"n_A": a, "n_B": b, "factor": factor.name})]
    except TypeError as err:
        errors.add(_span_of(design, "where"),
                   f"the design filter compares values of different kinds ({err})",
                   "compare sizes with numbers and 'factor' with a quoted string")
        return []
    if design.sample is not None:
        unordered = len({tuple(sorted(p)) for p in pairs})
        if design.sample[0] > unordered:
            errors.add(_span_of(design, "sample"),
                       f"sample {design.sample[0]} asks for more size pairs than factor '{factor.name}' has "
                       f"({unordered} unordered pairs)", f"sample at most {unordered}, or drop 'sample'")
            return []
        pairs = _sample_pairs(pairs, design.sample, seed, factor.name)
    _check_balance(design, factor, pairs, ranges, errors)
    return pairs


def _sample_pairs(pairs: list[tuple[int, int]], sample: tuple[int, int | None], seed: int,
                  factor: str) -> list[tuple[int, int]]:
    """A seeded subset of unordered size pairs, each kept with its mirror so balance survives."""
    count, sample_seed = sample
    unordered = sorted({tuple(sorted(p)) for p in pairs})
    ranked = sorted(unordered, key=lambda p: item_rng(sample_seed if sample_seed is not None else seed,
                                                      factor, *p).random())
    # Equal-size pairs have no mirror, so each factor keeps the same share of them: then every factor
    # gets the same number of ordered comparisons, and every cell the same number of trials.
    diagonal = [p for p in ranked if p[0] == p[1]]
    mirrored = [p for p in ranked if p[0] != p[1]]
    on_diagonal = min(len(diagonal), max(count - len(mirrored), round(count * len(diagonal) / len(ranked))))
    keep = set(diagonal[:on_diagonal] + mirrored[:count - on_diagonal])
    return [p for p in pairs if tuple(sorted(p)) in keep]


def _check_balance(design: PairsDesign, factor: n.Factor, pairs: list[tuple[int, int]],
                   ranges: dict[str, range], errors: ErrorCollector) -> None:
    where = design.design.get("where") or design.design.get("sizes") or design.design
    span = where.span
    if not pairs:
        errors.add(span, f"design '{design.name}' leaves factor '{factor.name}' with no comparison")
        return
    present = set(pairs)
    lonely = next((p for p in pairs if (p[1], p[0]) not in present), None)
    if lonely is not None:
        errors.add(span, f"design '{design.name}' cannot be balanced: (n_A={lonely[0]}, n_B={lonely[1]}) has "
                   f"no mirror (n_A={lonely[1]}, n_B={lonely[0]}) for factor '{factor.name}'",
                   "each group must appear with each size equally often: use a symmetric filter and equal ranges")
        return
    for group, index in (("A", 0), ("B", 1)):
        seen = {p[index] for p in pairs}
        missing = [s for s in ranges[f"n_{group}"] if s not in seen]
        if missing:
            errors.add(span, f"design '{design.name}' cannot be balanced: group {group} of factor "
                       f"'{factor.name}' never has size {missing[0]}",
                       "narrow the size range or loosen the filter")
            return


def _sample_contexts(compiled: CompiledPairs) -> Iterator[dict[str, Any]]:
    """One context per factor and favoured side, so every level's surface forms are rendered once."""
    for factor in compiled.design.factors:
        a, b = compiled.comparisons[factor.name][0]
        first, second = sides(factor, a, b, "AB")
        for target, other in ((first, second), (second, first)):
            yield {"first": first, "second": second, "factor": factor.name, "target": target, "other": other}


def _check_sample_render(compiled: CompiledPairs, errors: ErrorCollector) -> None:
    """Render every template for every factor; report each broken template once."""
    texts = [compiled.prompt, *([compiled.system] if compiled.system else []), *compiled.cues.values()]
    broken: set[int] = set()
    rendered = None
    for context in _sample_contexts(compiled):
        for index, text in enumerate(texts):
            if index in broken:
                continue
            result = check_render(text, context, errors)
            if result is None:
                broken.add(index)
            elif index == 0 and rendered is None:
                rendered = result
    if 0 in broken or rendered is None:
        return
    lines = rendered.count("\n") + 1
    for inf in compiled.design.influences:
        if inf.position.kind == "after_line" and (inf.position.line or 0) > lines:
            errors.add(inf.position.span, f"after_line {inf.position.line} is past the end of the prompt, "
                       f"which has {lines} lines")


def _check_turn_counts(compiled: CompiledPairs, errors: ErrorCollector) -> None:
    for inf in compiled.design.influences:
        if inf.position.kind != "turns":
            continue
        try:
            allowed = allowed_pairs(compiled, inf)
        except TypeError as err:
            errors.add(inf.position.span, f"the filter of influence '{inf.name}' compares values of different "
                       f"kinds ({err})", "compare sizes (target.n, other.n) with numbers")
            return
        per_unordered = Counter(_unordered(p) for p in allowed)
        for factor in compiled.design.factors:
            tests = {_unordered(test) for test in compiled.comparisons[factor.name]}
            available = len(allowed) - max(per_unordered[test] for test in tests)
            if available < (inf.position.count or 0):
                errors.add(inf.position.span, f"influence '{inf.name}' needs {inf.position.count} example "
                           f"size pairs but its filter leaves {available} for factor '{factor.name}'")
                return


def _unordered(pair: tuple[int, int]) -> tuple[int, int]:
    return (pair[0], pair[1]) if pair[0] <= pair[1] else (pair[1], pair[0])
