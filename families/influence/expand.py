"""Stage 4 for influence designs: check templates and balance, then expand into suite rows.

A comparison is one (n_A, n_B) size pair of one factor. Each comparison is shown in every display
order, under every condition: baseline, and each influence toward A and toward B.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from compiler import nodes as n
from compiler.errors import ErrorCollector, Span, did_you_mean
from compiler.expr import evaluate, names, resolves
from compiler.seeding import item_rng
from compiler.templates import CompiledText, check_render, compile_text
from families.influence.check import PairsDesign

CUE_NAMES = {"target", "other", "first", "second", "factor"}
PROMPT_NAMES = {"first", "second", "factor"}
FILTER_NAMES = {"n_A", "n_B", "factor"}
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


@dataclass
class CompiledPairs:
    """A pairs design with its templates compiled and its comparison sets fixed."""

    design: PairsDesign
    seed: int
    prompt: CompiledText
    system: CompiledText | None
    cues: dict[str, CompiledText]
    followups: list[dict[str, Any]] | None
    comparisons: dict[str, list[tuple[int, int]]]
    examples: dict[str, list[tuple[int, int]]] = field(default_factory=dict)
    example_index: dict[str, dict[tuple[int, int], int]] = field(default_factory=dict)

    @property
    def name(self) -> str:
        return self.design.name

    @property
    def span(self) -> Span:
        return self.design.design.span

    @property
    def mode(self) -> str:
        return self.design.mode

    @property
    def analysis(self) -> dict[str, Any]:
        return self.design.analysis

    @property
    def balance_keys(self) -> tuple[str, ...]:
        return ("factor", "influence", "condition")

    @property
    def shared(self) -> dict[str, str]:
        return {c.key: "influence" for c in self.design.conditions if c.shared}

    @property
    def served(self) -> dict[str, list[Any]]:
        return {"influence": [inf.name for inf in self.design.influences]}

    def summary(self) -> str:
        design = self.design
        comparisons = sum(len(v) for v in self.comparisons.values())
        return (f"{len(design.factors)} factors, {len(design.influences)} influences, "
                f"{len(design.conditions)} conditions, {comparisons} comparisons, {len(design.orders)} display orders")

    def rows(self) -> Iterator[dict[str, Any]]:
        return expand(self)


def prepare(design: PairsDesign, seed: int, errors: ErrorCollector) -> CompiledPairs | None:
    """Compile templates, check them on a sample stimulus, fix comparisons and prove balance."""
    start = len(errors.diagnostics)
    prompt = compile_text(design.prompt.text, f"template '{design.prompt.name}'", PROMPT_NAMES, errors)
    system = None
    if design.system is not None:
        system = compile_text(design.system.text, f"system '{design.system.name}'", CUE_NAMES, errors)
    cues = {}
    for inf in design.influences:
        if inf.text is not None:
            cues[inf.name] = compile_text(inf.text, f"influence '{inf.name}'", CUE_NAMES, errors)
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
    compiled = CompiledPairs(design, seed, prompt, system, {k: v for k, v in cues.items() if v},
                             _followups(design), comparisons)
    _check_sample_render(compiled, errors)
    _check_turn_counts(compiled, errors)
    return None if len(errors.diagnostics) > start else compiled


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


def _comparisons(design: PairsDesign, factor: n.Factor, seed: int,
                 errors: ErrorCollector) -> list[tuple[int, int]]:
    ranges = {axis.name: range(axis.low, axis.high + 1) for axis in design.sizes}
    try:
        pairs = [(a, b) for a in ranges["n_A"] for b in ranges["n_B"]
                 if design.where is None or evaluate(design.where, {"n_A": a, "n_B": b, "factor": factor.name})]
    except TypeError as err:
        errors.add(design.design.get("where").span,  # type: ignore[union-attr]
                   f"the design filter compares values of different kinds ({err})",
                   "compare sizes with numbers and 'factor' with a quoted string")
        return []
    if design.sample is not None:
        unordered = len({tuple(sorted(p)) for p in pairs})
        if design.sample[0] > unordered:
            errors.add(design.design.get("sample").span,  # type: ignore[union-attr]
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
        first, second = _sides(factor, a, b, "AB")
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
            allowed = _allowed_pairs(compiled, inf)
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


def _sides(factor: n.Factor, n_a: int, n_b: int, order: str) -> tuple[dict[str, Any], dict[str, Any]]:
    levels = {lv.group: level_forms(lv) for lv in factor.levels}
    sizes = {"A": n_a, "B": n_b}
    first, second = order[0], order[1]
    return (side(levels[first], first, sizes[first], "A"), side(levels[second], second, sizes[second], "B"))


def _followups(design: PairsDesign) -> list[dict[str, Any]] | None:
    if not design.followups:
        return None
    out = []
    for follow in design.followups:
        entry: dict[str, Any] = {"name": follow.name, "content": follow.text.value}
        if follow.judge is not None:
            judge = follow.judge
            entry["judge"] = {"labels": list(judge.labels), "model": judge.model,
                              "prompt": judge.prompt.value if judge.prompt else _DEFAULT_JUDGE}
        out.append(entry)
    return out


_DEFAULT_JUDGE = "Classify the reply below into exactly one of the labels {{ labels }}.\n\nReply:\n{{ reply }}"


# ---- expansion --------------------------------------------------------------------
def expand(compiled: CompiledPairs) -> Iterator[dict[str, Any]]:
    """Every row of the design, as dicts ready to be serialised (ids not yet attached)."""
    design = compiled.design
    for factor in design.factors:
        for n_a, n_b in compiled.comparisons[factor.name]:
            for order in design.orders:
                yield from _rows_for(compiled, factor, n_a, n_b, order)


def _rows_for(compiled: CompiledPairs, factor: n.Factor, n_a: int, n_b: int,
              order: str) -> Iterator[dict[str, Any]]:
    design = compiled.design
    first, second = _sides(factor, n_a, n_b, order)
    base = {"first": first, "second": second, "factor": factor.name}
    question = compiled.prompt.render(base)
    system = compiled.system.render(base) if compiled.system else None
    groups = {lv.group: lv.name for lv in factor.levels}
    cell = {"factor": factor.name, "group_A": groups["A"], "group_B": groups["B"],
            "n_A": n_a, "n_B": n_b, "order": order}
    answers = {design.answer_tokens[0]: first["name"], design.answer_tokens[1]: second["name"]}
    for cond in design.conditions:
        if cond.toward is None:
            influences = [None] if cond.shared else list(design.influences)
            for inf in influences:
                messages = _messages(system, [], question)
                yield _row(compiled, messages, {**cell, "influence": inf.name if inf else None,
                                                "condition": cond.key}, answers)
            continue
        target = first if first["group"] == cond.toward else second
        other = second if target is first else first
        for inf in design.influences:
            context = {**base, "target": target, "other": other}
            messages = _influenced(compiled, inf, context, question, system, (n_a, n_b, order, cond.key))
            yield _row(compiled, messages, {**cell, "influence": inf.name, "condition": cond.key}, answers)


def _row(compiled: CompiledPairs, messages: list[dict[str, Any]], cell: dict[str, Any],
         answers: dict[str, str]) -> dict[str, Any]:
    row: dict[str, Any] = {"messages": messages, "samples": compiled.design.samples_per_row, "cell": cell,
                           "answers": answers, "decode": compiled.design.decode}
    if compiled.followups:
        row["followups"] = compiled.followups
    return row


def _messages(system: str | None, turns: list[dict[str, Any]], user: str) -> list[dict[str, Any]]:
    head = [{"role": "system", "content": system}] if system is not None else []
    return [*head, *turns, {"role": "user", "content": user}]


def _influenced(compiled: CompiledPairs, inf: n.Influence, context: dict[str, Any], question: str,
                system: str | None, coords: tuple[Any, ...]) -> list[dict[str, Any]]:
    pos = inf.position
    if pos.kind == "turns":
        turns = _few_shot(compiled, inf, context, coords)
        return _messages(system, turns, question)
    cue = compiled.cues[inf.name].render(context)
    if inf.brackets is not None:
        cue = f"{inf.brackets[0]}{cue}{inf.brackets[1]}"
    if pos.kind == "system":
        return _messages(cue, [], question)
    if pos.kind == "prepend":
        return _messages(system, [], f"{cue}\n\n{question}")
    if pos.kind == "append":
        return _messages(system, [], f"{question}\n\n{cue}")
    lines = question.split("\n")
    at = pos.line or 0
    return _messages(system, [], "\n".join([*lines[:at], cue, *lines[at:]]))


def _allowed_pairs(compiled: CompiledPairs, inf: n.Influence) -> list[tuple[int, int]]:
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

    def __getitem__(self, index: int) -> tuple[int, int]:  # type: ignore[override]
        if not 0 <= index < len(self):
            raise IndexError(index)
        for skipped in self.skip:
            if skipped <= index:
                index += 1
        return self.allowed[index]


def _example_pairs(compiled: CompiledPairs, inf: n.Influence, test: tuple[int, int]) -> Sequence[tuple[int, int]]:
    """Demonstration pairs for one test item: never the test item's own pair, in either order."""
    allowed = _allowed_pairs(compiled, inf)
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
    turns: list[dict[str, Any]] = []
    for t_size, o_size in chosen:
        target_first = rng.random() < 0.5
        t_side = side(_strip(target), target["group"], t_size, "A" if target_first else "B")
        o_side = side(_strip(other), other["group"], o_size, "B" if target_first else "A")
        first, second = (t_side, o_side) if target_first else (o_side, t_side)
        example = {"first": first, "second": second, "factor": context["factor"], "target": t_side, "other": o_side}
        turns.append({"role": "user", "content": compiled.prompt.render(example)})
        turns.append({"role": "assistant", "content": str(evaluate(pos.answer, example))})  # type: ignore[arg-type]
    return turns


def _strip(side_: dict[str, Any]) -> dict[str, str]:
    """The level's surface forms without the per-slot fields."""
    return {k: v for k, v in side_.items() if k not in ("n", "noun", "verb", "group", "option")}
