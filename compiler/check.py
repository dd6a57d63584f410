"""Stage 3, shared part: spec-wide checks (header, vocabulary, duplicates) and helpers every family uses.

Design clauses are checked by the design's family (families/<name>/check.py); this module knows none.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from functools import partial
from typing import Any

from spec_audits.compiler import nodes as n
from spec_audits.compiler.data_source import checked_source
from spec_audits.compiler.errors import ErrorCollector, close_match, did_you_mean, report_repeats
from spec_audits.compiler.templates import check_slots, check_syntax, compile_text
from spec_audits.contract.suite_terms import DECODE_KEYS, JUDGE_MODEL, JUDGE_SLOTS, decode_domain, valid_decode_value

REPLY_SLOT = re.compile(r"\{\{\s*reply\s*\}\}")  # what the runner replaces in a judge prompt
JUDGE_REPLIES = ("label", "json")  # the bare label, or a JSON object {"label": ..., "reason": ...}
POSITIONS = ("system", "prepend", "append", "after_line", "turns")
JOINED_POSITIONS = ("prepend", "append")
TOP_KEYWORDS = ("suite", "version", "seed", "description", "citation", "import", "factor", "system",
                "template", "influence", "data", "conversation", "followup", "puzzle", "generator", "design")


def check_spec(spec: n.Spec, errors: ErrorCollector, seed_override: int | None) -> Tables:
    """Run every spec-wide check; return the name tables the families resolve their designs against."""
    if spec.header is None:
        errors.add(spec.span, "the spec has no 'suite' statement", "start the file with: suite NAME \"Title\"")
    if spec.seed is None and seed_override is None:
        errors.add(spec.span, "the spec has no 'seed' statement", "add 'seed 12345' or pass --seed")
    tables = Tables(spec, errors)
    tables.broken_factors = _check_factors(spec.factors, errors)
    _check_influences(spec.influences, tables, errors)
    _check_followups(spec, tables, errors)
    _check_conversations(spec, tables, errors)
    for text in spec.texts:
        check_syntax(text.text, f"{text.kind} '{text.name}'", errors)
    for source in spec.data:  # a bad path is reported with every other mistake, whatever the designs' state
        checked_source(source, errors)
    if not spec.designs:
        errors.add(spec.span, "the spec declares no design", "add a 'design NAME:' block")
    return tables


class Tables:
    """Name -> declaration for each kind, with duplicates reported."""

    def __init__(self, spec: n.Spec, errors: ErrorCollector) -> None:
        self.factors = _index(spec.factors, "factor", errors)
        self.texts = _index(spec.texts, "template", errors)
        self.influences = _index(spec.influences, "influence", errors)
        self.followups = _index(spec.followups, "followup", errors)
        self.puzzles = _index(spec.puzzles, "puzzle", errors)
        self.conversations = _index(spec.conversations, "conversation", errors)
        _index(spec.data, "data source", errors)
        self.generators = _index(spec.generators, "generator", errors)
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
    close = close_match(level.group, TOP_KEYWORDS, 0.75)
    if close is not None:
        errors.add(level.span, f"'{level.group} {level.name}' is read as a level of factor '{factor.name}'; "
                   f"'{level.group}' looks like a misspelt '{close}'", f"did you mean '{close}'?")


def _check_influences(influences: Iterable[n.Influence], tables: Tables, errors: ErrorCollector) -> None:
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
        if inf.joiner is not None and pos.kind not in JOINED_POSITIONS:
            errors.add(inf.joiner.span, f"'joined' applies to prepend and append, not to {pos.kind} "
                       f"(influence '{inf.name}')", "remove 'joined ...'")


def _check_turns(inf: n.Influence, tables: Tables, errors: ErrorCollector) -> None:
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


def _check_followups(spec: n.Spec, tables: Tables, errors: ErrorCollector) -> None:
    """Each follow-up's decode settings, text and judge; the names its text reads depend on the design that
    sends it, so its family checks those."""
    for follow in spec.followups:
        checked_decode(follow.decode, errors)
        check_syntax(follow.text, f"follow-up '{follow.name}'", errors)
        if follow.judge is None:
            continue
        model = follow.judge.model
        if model is not None and not JUDGE_MODEL.fullmatch(model):
            errors.add(follow.judge.span, f"the judge model of follow-up '{follow.name}' is not a model name: "
                       f"{model!r}", "name it as provider/model (e.g. openai/gpt-4o-mini); never a URL, path or file")
        prompt = follow.judge.prompt
        before = len(errors.diagnostics)
        if prompt is not None:
            label = f"the judge prompt of follow-up '{follow.name}'"
            compile_text(prompt, label, set(JUDGE_SLOTS), errors)
            check_slots(prompt, label, JUDGE_SLOTS, errors)
        if prompt is not None and len(errors.diagnostics) == before and not REPLY_SLOT.search(prompt.value):
            errors.add(prompt.span, f"the judge prompt of follow-up '{follow.name}' never shows the reply",
                       "put {{ reply }} where the judge should read the model's reply")
        reply = follow.judge.reply
        if reply is not None and reply.name not in JUDGE_REPLIES:
            errors.add(reply.span, f"unknown judge reply format '{reply.name}'",
                       did_you_mean(reply.name, JUDGE_REPLIES))
        if len(follow.judge.labels) < 2:
            errors.add(follow.judge.span, f"the judge of follow-up '{follow.name}' needs at least two labels")
        for label in sorted({label for label in follow.judge.labels if follow.judge.labels.count(label) > 1}):
            errors.add(follow.judge.span, f"the judge of follow-up '{follow.name}' lists label '{label}' twice",
                       "remove one of them")


def _check_conversations(spec: n.Spec, tables: Tables, errors: ErrorCollector) -> None:
    for conversation in spec.conversations:
        for turn in conversation.turns:
            if turn.template is not None:
                tables.lookup(tables.texts, turn.template, "template", errors)


def check_repeated_clauses(design: n.Design, errors: ErrorCollector) -> None:
    seen: dict[str, n.Clause] = {}
    for clause in design.clauses:
        if clause.keyword in seen:
            errors.add(clause.span, f"'{clause.keyword}' is given twice in design '{design.name}' "
                       f"(first at line {seen[clause.keyword].span.line})", "merge them into one clause")
        seen.setdefault(clause.keyword, clause)


def is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def is_whole(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


Domain = tuple[Callable[[Any], bool], str]  # the test a value passes, and the allowed range in words
DECODE_DOMAINS: dict[str, Domain] = {  # the suite contract's own domains: what compiles is what runs
    name: (partial(valid_decode_value, name), decode_domain(name)) for name in DECODE_KEYS
}


def check_domains(options: Iterable[n.Option], domains: dict[str, Domain], errors: ErrorCollector) -> None:
    """Each option with a domain checked against it; the message names the allowed range."""
    for option in options:
        domain = domains.get(option.name)
        if domain is not None and not domain[0](option.value):
            errors.add(option.span, f"{option.name} must be {domain[1]}, got {option.value!r}")


def first_values(options: Iterable[n.Option]) -> dict[str, Any]:
    """Option name -> value, in the spec's order; a repeated option (reported elsewhere) keeps its first."""
    values: dict[str, Any] = {}
    for option in options:
        values.setdefault(option.name, option.value)
    return values


def checked_decode(options: Sequence[n.Option], errors: ErrorCollector) -> dict[str, Any]:
    """Decode settings by name, each unknown, repeated or out-of-domain one reported."""
    report_repeats(((o.name, o.span) for o in options), "decode setting", errors)
    for option in options:
        if option.name not in DECODE_KEYS:
            errors.add(option.span, f"unknown decode setting '{option.name}'", did_you_mean(option.name, DECODE_KEYS))
    check_domains(options, DECODE_DOMAINS, errors)
    return first_values(options)
