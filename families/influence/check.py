"""Stage 3 for influence designs: every clause checked, every name resolved against the spec's tables."""

from __future__ import annotations

from typing import Any, TypeVar

from spec_audits.families.influence.clauses import CROSS, FACTORS, INFLUENCES, SAMPLE, SIZES, TRIALS, WHERE
from spec_audits.sdk import (
    ClauseSpec,
    DesignContext,
    Domain,
    ErrorCollector,
    Record,
    Tables,
    TypedDesign,
    check_attributes,
    check_domains,
    did_you_mean,
    field,
    is_number,
    is_whole,
    report_repeats,
)
from spec_audits.sdk import nodes as n

T = TypeVar("T")
ORDERS = {"both": ("AB", "BA"), "AB": ("AB",), "BA": ("BA",)}
MODES = ("sample", "logprob")
RESERVED_FORMS = ("name", "label", "n", "noun", "verb", "group", "option")  # set per slot by the expansion
MAX_BOOTSTRAP = 1_000_000
ANALYSIS_DOMAINS: dict[str, Domain] = {
    "alpha": (lambda v: is_number(v) and 0 < v < 1, "a number between 0 and 1"),
    "bootstrap": (lambda v: is_whole(v) and 1 <= v <= MAX_BOOTSTRAP, f"a whole number from 1 to {MAX_BOOTSTRAP:,}"),
    "fdr": (lambda v: v == "bh", "bh (Benjamini-Hochberg, the correction the scorer applies)"),
    "fdr_by": (lambda v: v == "benchmark", "benchmark (the families the scorer corrects within)"),
}
TRIALS_HINT = "trials N per cell keeps N trials of every cell"
MAX_COMPARISONS = 1_000_000  # size pairs per factor; more is almost surely a typo in a range
CLAUSES = ("factors", "influences", "conditions", "sizes", "order", "samples", "where", "cross", "sample",
           "answer", "decode", "mode", "analysis", "system", "prompt", "followups", "trials")


class Answer(Record):
    """The two answer tokens and what they name. `labels`: token i names the option shown i-th (A/B), so
    its meaning follows the display order; `meanings`: the first token always means group A and the second
    group B, whatever the order (yes/no, option names)."""

    kind: str
    tokens: tuple[str, str]

    def record(self) -> dict[str, Any]:
        """How manifest.json's analysis records it, for the scorer to find the option shown first."""
        return {"kind": self.kind, "tokens": list(self.tokens)}

    def labels(self) -> tuple[str, str]:
        """What the slots' `option` shows: the labels themselves, or the letters A and B beside meanings."""
        return self.tokens if self.kind == "labels" else ("A", "B")

    def answers(self, shown: tuple[tuple[str, str], tuple[str, str]]) -> dict[str, str]:
        """Token -> outcome, given the (outcome, group letter) of the options in display order."""
        if self.kind == "labels":
            return {token: outcome for token, (outcome, _) in zip(self.tokens, shown, strict=True)}
        by_group = {group: outcome for outcome, group in shown}
        return {self.tokens[0]: by_group["A"], self.tokens[1]: by_group["B"]}

    def cell(self, shown: tuple[tuple[str, str], tuple[str, str]]) -> dict[str, str]:
        """Meanings do not say which option came first, so their rows record its group as cell `first`."""
        return {"first": shown[0][1]} if self.kind == "meanings" else {}


class PairsDesign(Record):
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
    answer: Answer
    decode: dict[str, Any]
    mode: str
    analysis: dict[str, Any]
    followups: tuple[n.FollowUpDef, ...] = field(default_factory=tuple)
    trials: tuple[int, int | None] | None = None  # `trials N per cell [seed S]`: a seeded subset of trials


def resolve_pairs(design: TypedDesign, context: DesignContext, errors: ErrorCollector) -> PairsDesign | None:
    """Check every clause of an influence design; None after reporting every problem found."""
    tables = context.tables
    start = len(errors.diagnostics)
    factors = select(design, FACTORS, tables.factors, "factor", errors)
    influences = select(design, INFLUENCES, tables.influences, "influence", errors)
    broken = any(factor.name in tables.broken_factors for factor in factors)  # reported by the shared checks
    _check_levels(design.node, factors, tables.broken_factors, errors)
    conditions = conditions_of(design, errors)
    system = text_ref(design.system, "system", tables, errors)
    prompt = text_ref(design.prompt, "template", tables, errors)
    if prompt is None and design.prompt is None:
        prompt = tables.texts.get("question")
        if prompt is None:
            errors.add(design.span, f"design '{design.name}' names no prompt template",
                       "add 'prompt NAME' or declare a template named 'question'")
    sizes = _sizes(design, errors)
    orders = orders_of(design, errors)
    samples = samples_of(design, orders, errors)
    answer = answer_of(design, orders, errors)
    mode = mode_of(design, errors)
    check_reading(design, mode, errors)
    analysis = analysis_of(design, errors, answer)
    _check_crossing(design, errors)
    if prompt is not None and len(errors.diagnostics) == start and not broken:
        _check_attributes(factors, prompt, system, influences, errors)
    if len(errors.diagnostics) > start or broken or prompt is None or answer is None:
        return None
    sample, trials = design.get(SAMPLE), design.get(TRIALS)
    if not positive_count(design, TRIALS, TRIALS_HINT, errors) or not positive_count(
            design, SAMPLE, "sample N keeps N unordered size pairs (with their mirrors)", errors):
        return None
    return PairsDesign(
        name=design.name, design=design.node, factors=factors, influences=influences, conditions=conditions,
        system=system, prompt=prompt, sizes=sizes, orders=orders, samples_per_row=samples,
        where=design.get(WHERE), sample=sample, answer=answer, decode=design.decode, mode=mode,
        analysis=analysis, followups=design.followups, trials=trials,
    )


def _check_levels(design: n.Design, factors: tuple[n.Factor, ...], broken: set[str],
                  errors: ErrorCollector) -> None:
    for factor in factors:
        if factor.name in broken:
            continue
        if sorted(lv.group or "" for lv in factor.levels) != ["A", "B"]:
            errors.add(factor.span, f"factor '{factor.name}' must have exactly two levels labelled A and B "
                       f"for design '{design.name}'", "write: A level1 \"...\" / \"...\"  B level2 ...")
        _check_reserved_forms(factor, errors)


def positive_count(design: TypedDesign, spec: ClauseSpec[tuple[int, int | None]], hint: str,
                   errors: ErrorCollector) -> bool:
    """A `trials N ...` / `sample N ...` clause's count is at least 1 (or the clause is absent)."""
    value, clause = design.get(spec), design.clause(spec.keyword)
    if value is None or clause is None or value[0] >= 1:
        return True
    errors.add(clause.span, f"{spec.keyword} needs a count >= 1, got {value[0]}", hint)
    return False


def _check_attributes(factors: tuple[n.Factor, ...], prompt: n.TemplateDef, system: n.TemplateDef | None,
                      influences: tuple[n.Influence, ...], errors: ErrorCollector) -> None:
    """`first.nuon` in any branch of any text, not only in those a sample render takes."""
    slot = {*RESERVED_FORMS, "plural", "singular", "a_singular",
            *(form for factor in factors for level in factor.levels for form in level.forms)}
    schema = dict.fromkeys(("first", "second", "target", "other"), slot)
    texts = [(prompt, "template"), *([(system, "system")] if system else [])]
    for text, kind in texts:
        check_attributes(text.text, f"{kind} '{text.name}'", schema, errors)
    for inf in influences:
        if inf.text is not None:
            check_attributes(inf.text, f"influence '{inf.name}'", schema, errors)


def _check_reserved_forms(factor: n.Factor, errors: ErrorCollector) -> None:
    """A form called `name` (or another per-slot field) would overwrite what the design fills in."""
    for level in factor.levels:
        for form in sorted(set(level.forms) & set(RESERVED_FORMS)):
            errors.add(level.span, f"level '{level.name}' of factor '{factor.name}' names a form '{form}', "
                       "which the design fills in itself", f"reserved form names: {', '.join(RESERVED_FORMS)}")


def _check_crossing(design: TypedDesign, errors: ErrorCollector) -> None:
    """`cross full` (the default) crosses every axis; `sample N` is the only alternative."""
    axes, cross = design.get(CROSS), design.clause(CROSS.keyword)
    if axes is None or cross is None:
        return
    if len(axes) > 1 or axes[0].count is not None or axes[0].values or axes[0].name != "full":
        where = axes[0].span if len(axes) == 1 else cross.span
        written = " x ".join(axis.name for axis in axes)
        errors.add(where, f"unknown crossing '{written}'", "write 'cross full', or 'sample N' for a seeded subset")
    elif design.get(SAMPLE) is not None:
        errors.add(cross.span, "'cross full' and 'sample' contradict each other", "keep one of them")


def required(design: TypedDesign, keyword: str, value: T | None, hint: str, errors: ErrorCollector) -> T | None:
    """The value of the design's `keyword` clause, or None after reporting that it is missing."""
    if value is None:
        errors.add(design.span, f"design '{design.name}' has no '{keyword}' clause", hint)
    return value


def select(design: TypedDesign, spec: ClauseSpec[n.Selection], table: dict[str, Any], kind: str,
           errors: ErrorCollector) -> tuple[Any, ...]:
    """The declarations a `factors`/`influences` selection names (every one for `*`)."""
    keyword = spec.keyword
    selection = required(design, keyword, design.get(spec), f"add '{keyword} *' to use every {kind}", errors)
    if selection is None:
        return ()
    if selection.names is None:
        clause = design.clause(keyword)
        if not table and clause is not None:
            errors.add(clause.span, f"'{keyword} *' selects nothing: the spec declares no {kind}")
        return tuple(table.values())
    report_repeats(((ref.name, ref.span) for ref in selection.names), kind, errors)
    found = []
    for ref in dict((ref.name, ref) for ref in selection.names).values():
        if ref.name in table:
            found.append(table[ref.name])
        else:
            errors.add(ref.span, f"unknown {kind} '{ref.name}'", did_you_mean(ref.name, table))
    return tuple(found)


def conditions_of(design: TypedDesign, errors: ErrorCollector) -> tuple[n.ConditionRef, ...]:
    conditions = required(design, "conditions", design.conditions, "add: conditions baseline, toward A, toward B",
                          errors)
    if conditions is None:
        return ()
    keys: set[str] = set()
    for cond in conditions:
        if cond.toward is not None and cond.toward not in ("A", "B"):
            errors.add(cond.span, f"unknown group '{cond.toward}' in 'toward {cond.toward}'",
                       did_you_mean(cond.toward, ("A", "B")))
        if cond.key in keys:
            errors.add(cond.span, f"condition '{cond.key}' is listed twice")
        keys.add(cond.key)
    return conditions


def text_ref(ref: n.Ref | None, kind: str, tables: Tables, errors: ErrorCollector) -> n.TemplateDef | None:
    """The `system` or `prompt` text a clause names, of that kind."""
    if ref is None:
        return None
    text: n.TemplateDef | None = tables.lookup(tables.texts, ref, kind, errors)
    if text is not None and text.kind != kind:
        errors.add(ref.span, f"'{text.name}' is a {text.kind}, not a {kind}",
                   f"declare it with '{kind} {text.name} \"...\"'")
        return None
    return text


def _sizes(design: TypedDesign, errors: ErrorCollector) -> tuple[n.SizeAxis, ...]:
    axes = required(design, "sizes", design.get(SIZES), "add: sizes n_A in 1..10, n_B in 1..10", errors)
    clause = design.clause(SIZES.keyword)
    if axes is None or clause is None:
        return ()
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


def orders_of(design: TypedDesign, errors: ErrorCollector) -> tuple[str, ...]:
    ref = design.order
    if ref is None:
        return ("AB",)
    if ref.name not in ORDERS:
        errors.add(ref.span, f"unknown display order '{ref.name}'", did_you_mean(ref.name, ORDERS))
        return ("AB",)
    return ORDERS[ref.name]


def samples_of(design: TypedDesign, orders: tuple[str, ...], errors: ErrorCollector) -> int:
    samples = design.samples
    if samples is None:
        return 1
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


LABELS_HINT = 'display labels: answer labels "A" | "B"; meanings: answer options "yes" | "no" (first = group A)'


def answer_of(design: TypedDesign, orders: tuple[str, ...], errors: ErrorCollector) -> Answer | None:
    spec = required(design, "answer", design.answer, 'add: answer labels "A" | "B"', errors)
    if spec is None:
        return None
    if spec.kind not in ("choice", "labels", "options"):  # another form: reported by the shared checks
        return None
    if len(spec.tokens) != 2:
        errors.add(spec.span, "an influence design needs a two-way answer", LABELS_HINT)
        return None
    first, second = spec.tokens
    if first == second:
        errors.add(spec.span, "the two answer tokens must differ")
        return None
    if spec.kind == "choice" and len(orders) > 1 and spec.tokens != ("A", "B"):
        errors.add(spec.span, f'answer choice "{first}" | "{second}" does not say whether "{first}" names the '
                   f'option shown first or always means group A, and the design shows both display orders',
                   f'write answer labels "{first}" | "{second}" if "{first}" names the option shown first, or '
                   f'answer options "{first}" | "{second}" if "{first}" means group A in both orders')
        return None
    return Answer("meanings" if spec.kind == "options" else "labels", (first, second))


def mode_of(design: TypedDesign, errors: ErrorCollector) -> str:
    ref = design.mode
    if ref is None:
        return "sample"
    if ref.name not in MODES:
        errors.add(ref.span, f"unknown mode '{ref.name}'", did_you_mean(ref.name, MODES))
    return ref.name


def check_reading(design: TypedDesign, mode: str, errors: ErrorCollector) -> None:
    """An answer read off a reasoned reply's last line (`answer_line`) has no first-token probability."""
    clause = design.clause("mode")
    if mode == "logprob" and "answer_line" in design.decode and clause is not None:
        errors.add(clause.span, "mode logprob reads the answer's first token, but 'decode answer_line' "
                   "reads it off the last line of a reasoned reply", "use mode sample, or drop answer_line")


def analysis_of(design: TypedDesign, errors: ErrorCollector, answer: Answer | None) -> dict[str, Any]:
    """The analysis options, and what the answer tokens name (the scorer reads it to find the option shown
    first)."""
    analysis = design.analysis
    recorded = {"answer": answer.record()} if answer is not None else {}
    if analysis is None:
        return {"family": "influence_pairs", **recorded}
    check_domains(analysis.options, ANALYSIS_DOMAINS, errors)
    return {"family": analysis.ref.name, **analysis.values} | recorded
