"""Stage 3: semantic checks over the whole spec, every error collected, then designs resolved."""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from compiler import nodes as n
from compiler.errors import ErrorCollector, did_you_mean

POSITIONS = ("system", "prepend", "append", "after_line", "turns")
ORDERS = {"both": ("AB", "BA"), "AB": ("AB",), "BA": ("BA",)}
MODES = ("sample", "logprob")
ANALYSES = ("influence_pairs", "cue_visibility", "bias_decomposition")
DECODE_KEYS = ("temperature", "max_tokens", "top_p", "top_k", "seed", "stop", "reasoning_effort",
               "presence_penalty", "frequency_penalty")
PAIR_CONDITIONS = ("baseline",)
MAX_COMPARISONS = 1_000_000  # size pairs per factor; more is almost surely a typo in a range
TOP_KEYWORDS = ("suite", "version", "seed", "description", "citation", "import", "factor", "system",
                "template", "influence", "data", "conversation", "followup", "puzzle", "design")
# Clauses whose expansion belongs to later families; they parse and check, but do not compile yet.
_NOT_YET = ("conversation",)
# Clauses that make a design a cue-visibility design (compiler/expand_cue.py resolves those).
CUE_CLAUSES = ("over", "probes")


@dataclass(frozen=True)
class PairsDesign:
    """A direction-flipped influence design, resolved: every name points at its declaration."""

    name: str
    design: n.Design
    factors: tuple[n.Factor, ...]
    influences: tuple[n.Influence, ...]
    conditions: tuple[n.ConditionRef, ...]
    system: n.TemplateDef | None
    prompt: n.TemplateDef
    sizes: tuple[n.SizeAxis, ...]
    orders: tuple[str, ...]
    samples_per_row: int
    where: n.Expr | None
    sample: tuple[int, int | None] | None
    answer_tokens: tuple[str, str]
    decode: dict[str, Any]
    mode: str
    analysis: dict[str, Any]
    followups: tuple[n.FollowUpDef, ...] = field(default_factory=tuple)


def check_spec(spec: n.Spec, errors: ErrorCollector, seed_override: int | None) -> list[PairsDesign]:
    """Run every check; return the resolved designs (meaningful only if no error was added)."""
    if spec.header is None:
        errors.add(spec.span, "the spec has no 'suite' statement", "start the file with: suite NAME \"Title\"")
    if spec.seed is None and seed_override is None:
        errors.add(spec.span, "the spec has no 'seed' statement", "add 'seed 12345' or pass --seed")
    tables = _Tables(spec, errors)
    tables.broken_factors = _check_factors(spec.factors, errors)
    _check_influences(spec.influences, tables, errors)
    _check_followups(spec, tables, errors)
    if not spec.designs:
        errors.add(spec.span, "the spec declares no design", "add a 'design NAME:' block")
    return [d for d in (_resolve_design(design, tables, errors) for design in spec.designs) if d]


class _Tables:
    """Name -> declaration for each kind, with duplicates reported."""

    def __init__(self, spec: n.Spec, errors: ErrorCollector) -> None:
        self.factors = _index(spec.factors, "factor", errors)
        self.texts = _index(spec.texts, "template", errors)
        self.influences = _index(spec.influences, "influence", errors)
        self.followups = _index(spec.followups, "followup", errors)
        self.puzzles = _index(spec.puzzles, "puzzle", errors)
        self.conversations = _index(spec.conversations, "conversation", errors)
        _index(spec.data, "data source", errors)
        _index(spec.designs, "design", errors)
        self.broken_factors: set[str] = set()

    def lookup(self, table: dict[str, Any], ref: n.Ref, kind: str, errors: ErrorCollector) -> Any:
        if ref.name in table:
            return table[ref.name]
        errors.add(ref.span, f"unknown {kind} '{ref.name}'", did_you_mean(ref.name, table))
        return None


def _index(items: Sequence[Any], kind: str, errors: ErrorCollector) -> dict[str, Any]:
    table: dict[str, Any] = {}
    for item in items:
        if item.name in table:
            first = table[item.name].span
            errors.add(item.span, f"duplicate {kind} '{item.name}' (first declared at {first.file}:{first.line})",
                       "give each one its own name")
            continue
        table[item.name] = item
    return table


def _check_factors(factors: Iterable[n.Factor], errors: ErrorCollector) -> set[str]:
    """Check every factor; return the names of those already reported (so designs do not repeat it)."""
    broken = set()
    for factor in factors:
        start = len(errors.diagnostics)
        if len(factor.levels) < 2:
            errors.add(factor.span, f"factor '{factor.name}' needs at least two levels")
        _index(factor.levels, f"level of factor '{factor.name}'", errors)
        groups = [lv.group for lv in factor.levels if lv.group is not None]
        if len(set(groups)) != len(groups):
            errors.add(factor.span, f"factor '{factor.name}' repeats a group label", "label levels A, B, ...")
        for level in factor.levels:
            _check_keyword_level(factor, level, errors)
        if len(errors.diagnostics) > start:
            broken.add(factor.name)
    return broken


def _check_keyword_level(factor: n.Factor, level: n.Level, errors: ErrorCollector) -> None:
    """A misspelt statement keyword after a factor block parses as one more level: say so."""
    if level.group is None or level.group in TOP_KEYWORDS:
        return
    close = difflib.get_close_matches(level.group, TOP_KEYWORDS, n=1, cutoff=0.75)
    if close:
        errors.add(level.span, f"'{level.group} {level.name}' is read as a level of factor '{factor.name}'; "
                   f"'{level.group}' looks like a misspelt '{close[0]}'", f"did you mean '{close[0]}'?")


def _check_influences(influences: Iterable[n.Influence], tables: _Tables, errors: ErrorCollector) -> None:
    for inf in influences:
        pos = inf.position
        if pos.kind == "unknown":
            errors.add(pos.span, f"unknown position '{pos.unknown}' for influence '{inf.name}'",
                       did_you_mean(pos.unknown or "", POSITIONS))
        elif pos.kind == "turns":
            _check_turns(inf, tables, errors)
        elif inf.text is None:
            errors.add(inf.span, f"influence '{inf.name}' has no cue text", "add the cue as a string at the end")
        if pos.kind == "after_line" and (pos.line or 0) < 1:
            errors.add(pos.span, f"after_line needs a line number >= 1, got {pos.line}")


def _check_turns(inf: n.Influence, tables: _Tables, errors: ErrorCollector) -> None:
    pos = inf.position
    if inf.text is not None:
        errors.add(inf.text.span, f"influence '{inf.name}' builds its turns from a template; remove the text")
    if (pos.count or 0) < 1:
        errors.add(pos.span, f"turns needs a count >= 1, got {pos.count}")
    if pos.template is not None:
        text = tables.lookup(tables.texts, pos.template, "template", errors)
        if text is not None and text.kind != "template":
            errors.add(pos.template.span, f"'{text.name}' is a {text.kind}, not a template",
                       "few-shot turns are built from a question template")


def _check_followups(spec: n.Spec, tables: _Tables, errors: ErrorCollector) -> None:
    for follow in spec.followups:
        if follow.judge is not None and len(follow.judge.labels) < 2:
            errors.add(follow.judge.span, f"the judge of follow-up '{follow.name}' needs at least two labels")


def is_cue_design(design: n.Design) -> bool:
    return any(clause.keyword in CUE_CLAUSES for clause in design.clauses)


def _resolve_design(design: n.Design, tables: _Tables, errors: ErrorCollector) -> PairsDesign | None:
    if is_cue_design(design):
        return None
    for clause in design.clauses:
        if clause.keyword in _NOT_YET:
            errors.add(clause.span, f"'{clause.keyword}' designs are parsed but not compiled by this version",
                       "this clause belongs to the conversation family")
    start = len(errors.diagnostics)
    check_repeated_clauses(design, errors)
    factors = _select(design, "factors", tables.factors, "factor", errors)
    influences = _select(design, "influences", tables.influences, "influence", errors)
    for factor in factors:
        if factor.name in tables.broken_factors:
            continue
        if sorted(lv.group or "" for lv in factor.levels) != ["A", "B"]:
            errors.add(factor.span, f"factor '{factor.name}' must have exactly two levels labelled A and B "
                       f"for design '{design.name}'", "write: A level1 \"...\" / \"...\"  B level2 ...")
    conditions = _conditions(design, errors)
    system = _text_ref(design, "system", "system", tables, errors)
    prompt = _text_ref(design, "prompt", "template", tables, errors)
    if prompt is None and design.get("prompt") is None:
        prompt = tables.texts.get("question")
        if prompt is None:
            errors.add(design.span, f"design '{design.name}' names no prompt template",
                       "add 'prompt NAME' or declare a template named 'question'")
    sizes = _sizes(design, errors)
    orders = _orders(design, errors)
    samples = _samples(design, orders, errors)
    answer = _answer(design, errors)
    decode = decode_options(design, errors)
    mode = _mode(design, errors)
    analysis = _analysis(design, errors)
    followups = _followups(design, tables, errors)
    _check_crossing(design, errors)
    if len(errors.diagnostics) > start or prompt is None or answer is None:
        return None
    where = design.get("where")
    sample = design.get("sample")
    if sample is not None and sample.value[0] < 1:  # type: ignore[index]
        errors.add(sample.span, f"sample needs a count >= 1, got {sample.value[0]}",  # type: ignore[index]
                   "sample N keeps N unordered size pairs (with their mirrors)")
        return None
    return PairsDesign(
        name=design.name, design=design, factors=factors, influences=influences, conditions=conditions,
        system=system, prompt=prompt, sizes=sizes, orders=orders, samples_per_row=samples,
        where=where.value if where else None, sample=sample.value if sample else None,
        answer_tokens=answer, decode=decode, mode=mode, analysis=analysis, followups=followups,
    )


def _check_crossing(design: n.Design, errors: ErrorCollector) -> None:
    """`cross full` (the default) crosses every axis; `sample N` is the only alternative."""
    cross = design.get("cross")
    if cross is None:
        return
    ref: n.Ref = cross.value  # type: ignore[assignment]
    if ref.name != "full":
        errors.add(ref.span, f"unknown crossing '{ref.name}'", "write 'cross full', or 'sample N' for a seeded subset")
    elif design.get("sample") is not None:
        errors.add(cross.span, "'cross full' and 'sample' contradict each other", "keep one of them")


def check_repeated_clauses(design: n.Design, errors: ErrorCollector) -> None:
    seen: dict[str, n.Clause] = {}
    for clause in design.clauses:
        if clause.keyword in seen:
            errors.add(clause.span, f"'{clause.keyword}' is given twice in design '{design.name}' "
                       f"(first at line {seen[clause.keyword].span.line})", "merge them into one clause")
        seen.setdefault(clause.keyword, clause)


def required_clause(design: n.Design, keyword: str, hint: str, errors: ErrorCollector) -> n.Clause | None:
    """The design's `keyword` clause, or None after reporting that it is missing."""
    clause = design.get(keyword)
    if clause is None:
        errors.add(design.span, f"design '{design.name}' has no '{keyword}' clause", hint)
    return clause


def _select(design: n.Design, keyword: str, table: dict[str, Any], kind: str,
            errors: ErrorCollector) -> tuple[Any, ...]:
    clause = required_clause(design, keyword, f"add '{keyword} *' to use every {kind}", errors)
    if clause is None:
        return ()
    selection: n.Selection = clause.value  # type: ignore[assignment]
    if selection.names is None:
        if not table:
            errors.add(clause.span, f"'{keyword} *' selects nothing: the spec declares no {kind}")
        return tuple(table.values())
    found = []
    for ref in selection.names:
        if ref.name in table:
            found.append(table[ref.name])
        else:
            errors.add(ref.span, f"unknown {kind} '{ref.name}'", did_you_mean(ref.name, table))
    return tuple(found)


def _conditions(design: n.Design, errors: ErrorCollector) -> tuple[n.ConditionRef, ...]:
    clause = required_clause(design, "conditions", "add: conditions baseline, toward A, toward B", errors)
    if clause is None:
        return ()
    conditions: tuple[n.ConditionRef, ...] = clause.value  # type: ignore[assignment]
    keys: set[str] = set()
    for cond in conditions:
        if cond.toward is not None and cond.toward not in ("A", "B"):
            errors.add(cond.span, f"unknown group '{cond.toward}' in 'toward {cond.toward}'",
                       did_you_mean(cond.toward, ("A", "B")))
        elif cond.toward is None and cond.name not in PAIR_CONDITIONS:
            errors.add(cond.span, f"unknown condition '{cond.name}' for an influence design",
                       did_you_mean(cond.name, ("baseline", "toward")))
        if cond.key in keys:
            errors.add(cond.span, f"condition '{cond.key}' is listed twice")
        keys.add(cond.key)
    return conditions


def _text_ref(design: n.Design, keyword: str, kind: str, tables: _Tables,
              errors: ErrorCollector) -> n.TemplateDef | None:
    clause = design.get(keyword)
    if clause is None:
        return None
    text = tables.lookup(tables.texts, clause.value, kind, errors)  # type: ignore[arg-type]
    if text is not None and text.kind != kind:
        errors.add(clause.value.span, f"'{text.name}' is a {text.kind}, not a {kind}",  # type: ignore[union-attr]
                   f"declare it with '{kind} {text.name} \"...\"'")
        return None
    return text


def _sizes(design: n.Design, errors: ErrorCollector) -> tuple[n.SizeAxis, ...]:
    clause = required_clause(design, "sizes", "add: sizes n_A in 1..10, n_B in 1..10", errors)
    if clause is None:
        return ()
    axes: tuple[n.SizeAxis, ...] = clause.value  # type: ignore[assignment]
    for axis in axes:
        if axis.name not in ("n_A", "n_B"):
            errors.add(axis.span, f"unknown size axis '{axis.name}'", did_you_mean(axis.name, ("n_A", "n_B")))
        if not 1 <= axis.low <= axis.high:
            errors.add(axis.span, f"bad range {axis.low}..{axis.high} for '{axis.name}'",
                       "a size range runs from a low bound >= 1 up to a high bound >= the low bound")
    names = [a.name for a in axes]
    if sorted(names) != ["n_A", "n_B"] and all(a in ("n_A", "n_B") for a in names):
        errors.add(clause.span, "sizes must give exactly one range for n_A and one for n_B")
    widths = [a.high - a.low + 1 for a in axes if a.low <= a.high]
    if len(widths) == 2 and widths[0] * widths[1] > MAX_COMPARISONS:
        errors.add(clause.span, f"sizes give {widths[0] * widths[1]:,} size pairs per factor; "
                   f"the compiler refuses more than {MAX_COMPARISONS:,}", "narrow the ranges")
    return axes


def _orders(design: n.Design, errors: ErrorCollector) -> tuple[str, ...]:
    clause = design.get("order")
    if clause is None:
        return ("AB",)
    ref: n.Ref = clause.value  # type: ignore[assignment]
    if ref.name not in ORDERS:
        errors.add(ref.span, f"unknown display order '{ref.name}'", did_you_mean(ref.name, ORDERS))
        return ("AB",)
    return ORDERS[ref.name]


def _samples(design: n.Design, orders: tuple[str, ...], errors: ErrorCollector) -> int:
    clause = design.get("samples")
    if clause is None:
        return 1
    samples: n.Samples = clause.value  # type: ignore[assignment]
    if samples.count < 1:
        errors.add(samples.span, f"samples must be >= 1, got {samples.count}")
        return 1
    if samples.split_by is None:
        return samples.count
    if samples.split_by != "order":
        errors.add(samples.span, f"samples can only be split by 'order', not '{samples.split_by}'",
                   did_you_mean(samples.split_by, ("order",)))
        return 1
    if samples.count % len(orders):
        errors.add(samples.span, f"cannot split {samples.count} samples evenly over {len(orders)} display orders",
                   f"use a multiple of {len(orders)}")
        return 1
    return samples.count // len(orders)


def _answer(design: n.Design, errors: ErrorCollector) -> tuple[str, str] | None:
    clause = required_clause(design, "answer", 'add: answer choice "A" | "B"', errors)
    if clause is None:
        return None
    spec: n.AnswerSpec = clause.value  # type: ignore[assignment]
    if spec.kind != "choice" or len(spec.tokens) != 2:
        errors.add(spec.span, "an influence design needs a two-way answer: choice \"A\" | \"B\"")
        return None
    if len(set(spec.tokens)) != 2:
        errors.add(spec.span, "the two answer tokens must differ")
        return None
    return spec.tokens[0], spec.tokens[1]


def _options(clause: n.Clause | None) -> tuple[n.Option, ...]:
    return clause.value if clause is not None else ()  # type: ignore[return-value]


def decode_options(design: n.Design, errors: ErrorCollector) -> dict[str, Any]:
    decode: dict[str, Any] = {}
    for option in _options(design.get("decode")):
        if option.name not in DECODE_KEYS:
            errors.add(option.span, f"unknown decode setting '{option.name}'", did_you_mean(option.name, DECODE_KEYS))
        elif option.name == "temperature" and not (isinstance(option.value, int | float) and option.value >= 0):
            errors.add(option.span, f"temperature must be a number >= 0, got {option.value!r}")
        elif option.name == "max_tokens" and not (isinstance(option.value, int) and option.value >= 1):
            errors.add(option.span, f"max_tokens must be a whole number >= 1, got {option.value!r}")
        decode[option.name] = option.value
    return decode


def _mode(design: n.Design, errors: ErrorCollector) -> str:
    clause = design.get("mode")
    if clause is None:
        return "sample"
    ref: n.Ref = clause.value  # type: ignore[assignment]
    if ref.name not in MODES:
        errors.add(ref.span, f"unknown mode '{ref.name}'", did_you_mean(ref.name, MODES))
    return ref.name


def _analysis(design: n.Design, errors: ErrorCollector) -> dict[str, Any]:
    clause = design.get("analysis")
    if clause is None:
        return {"family": "influence_pairs"}
    ref, options = clause.value  # type: ignore[misc]
    if ref.name not in ANALYSES:
        errors.add(ref.span, f"unknown analysis '{ref.name}'", did_you_mean(ref.name, ANALYSES))
    elif ref.name != "influence_pairs":
        errors.add(ref.span, f"analysis '{ref.name}' does not fit an influence design", "use influence_pairs")
    result: dict[str, Any] = {"family": ref.name}
    result.update({o.name: o.value for o in options})
    alpha = result.get("alpha", 0.05)
    if not (isinstance(alpha, int | float) and 0 < alpha < 1):
        span = next(o.span for o in options if o.name == "alpha")
        errors.add(span, f"alpha must be a number between 0 and 1, got {alpha!r}")
    return result


def _followups(design: n.Design, tables: _Tables, errors: ErrorCollector) -> tuple[n.FollowUpDef, ...]:
    clause = design.get("followups")
    refs: tuple[n.Ref, ...] = clause.value if clause is not None else ()  # type: ignore[assignment]
    found = (tables.lookup(tables.followups, ref, "followup", errors) for ref in refs)
    return tuple(f for f in found if f is not None)
