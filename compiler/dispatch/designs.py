"""Stages 3 and 4 per design: pick the design's family by its declared analysis, check the clauses, answer
forms, conditions and analysis options against what the family declares it takes (spec_audits/sdk/interface.py),
then run the family's checks and its preparation for expansion.

Each design counts its own errors, stage by stage (clauses, family checks, preparation): a mistake in one
design never stops another design's checks, and each stage of a design runs whenever its own earlier
stages passed.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from spec_audits.compiler import nodes as n
from spec_audits.compiler.check import check_repeated_clauses
from spec_audits.compiler.errors import ErrorCollector, Span, did_you_mean
from spec_audits.compiler.family import CompiledDesign
from spec_audits.compiler.recorded import RecordedDesign
from spec_audits.compiler.typed_design import (
    ANALYSIS,
    CONDITIONS,
    EVERY_DESIGN,
    GENERATOR_ANALYSIS,
    TypedDesign,
    resolve_design,
)
from spec_audits.dispatch import registry
from spec_audits.sdk.interface import DesignContext, Family, Form

if TYPE_CHECKING:
    from spec_audits.compiler.conversations import CompiledConversation

ANY = "*"  # a condition form of this name takes any condition name (the family checks them itself)


def prepare_designs(spec: n.Spec, context: DesignContext, errors: ErrorCollector) -> list[CompiledDesign]:
    """Every design checked and prepared; the errors of all of them added to `errors`."""
    prepared = []
    for design in spec.designs:
        own = ErrorCollector()
        compiled = _prepare_one(design, context, own, several=len(spec.designs) > 1)
        errors.extend(own.diagnostics)
        if compiled is not None:
            prepared.append(compiled)
    return prepared


def _prepare_one(design: n.Design, context: DesignContext, errors: ErrorCollector,
                 several: bool) -> CompiledDesign | None:
    family = family_of(design, errors)
    if family is None:
        return None
    check_repeated_clauses(design, errors)
    check_clauses(design, family, errors)
    if errors.diagnostics:  # a clause the family does not take: its checks would only add noise
        return None
    check_declared(design, family, errors)
    typed = resolve_design(design, context.tables, errors)
    conversation = _conversation(typed, context, errors)
    if design.damaged:
        own = ErrorCollector()
        family.check(typed, context, own)
        _keep_new(design, own, errors)
        return None
    resolved = family.check(typed, context, errors)
    if resolved is None or errors.diagnostics:
        return None
    compiled = family.prepare(resolved, context.seed, errors)
    return None if compiled is None else RecordedDesign(compiled, conversation, several)


def _keep_new(design: n.Design, own: ErrorCollector, errors: ErrorCollector) -> None:
    """The family's findings on a design that lost a clause to a syntax error (compiler/recover.py), so that one
    pass reports them all; but for those at a place already reported, or at the design's own header where a
    missing clause is said: they would repeat an earlier error in other words."""
    said = {(d.span.file, d.span.line, d.span.column) for d in errors.diagnostics}
    said.add((design.span.file, design.span.line, design.span.column))
    errors.extend(d for d in own.diagnostics if (d.span.file, d.span.line, d.span.column) not in said)


def _conversation(typed: TypedDesign, context: DesignContext, errors: ErrorCollector) -> CompiledConversation | None:
    """The design's `conversation NAME` resolved (every design takes one; compiler/conversations.py)."""
    if typed.conversation is None:
        return None
    from spec_audits.compiler.conversations import TURN_FORMS, UNREAD_FORMS, resolve_conversation

    node = context.tables.lookup(context.tables.conversations, typed.conversation, "conversation", errors)
    tokens = typed.answer.tokens if typed.answer is not None and typed.answer.kind in TURN_FORMS else None
    unread = typed.answer.kind if typed.answer is not None and typed.answer.kind in UNREAD_FORMS else None
    return resolve_conversation(node, tokens, errors, unread) if node is not None else None


def prepare_generators(spec: n.Spec, context: DesignContext, errors: ErrorCollector) -> dict[str, tuple[Family, Any]]:
    """Every generator block resolved by the family its `analysis` clause names: name -> (family, resolved)."""
    out = {}
    for block in spec.generators:
        ref = GENERATOR_ANALYSIS.value(block)
        if ref is None:
            errors.add(block.span, f"generator '{block.name}' names no analysis", "add: analysis bias_decomposition")
            continue
        family = registry.get(ref.name)
        if family is None or family.check_generator is None:
            writers = [f.name for f in registry.all_families() if f.check_generator is not None]
            errors.add(ref.span, f"no generator for analysis '{ref.name}'", did_you_mean(ref.name, writers))
            continue
        resolved = family.check_generator(block, context, errors)
        if resolved is not None:
            out[block.name] = (family, resolved)
    return out


def family_of(design: n.Design, errors: ErrorCollector) -> Family | None:
    """The family the design's `analysis` clause names (the default family when it has none)."""
    analysis = ANALYSIS.value(design)
    if analysis is None:
        return registry.get(registry.DEFAULT)
    ref = analysis[0]
    family = registry.get(ref.name)
    if family is None:
        errors.add(ref.span, f"unknown analysis '{ref.name}'", did_you_mean(ref.name, registry.names()))
    return family


def check_clauses(design: n.Design, family: Family, errors: ErrorCollector) -> None:
    """A clause the family does not take is an error at the clause, naming the family and what it takes (the
    other families are loaded only then, to say which of them takes it)."""
    for clause in design.clauses:
        if clause.keyword in family.clauses or clause.keyword in EVERY_DESIGN:
            continue
        owners = [f for f in registry.all_families() if f.name != family.name and clause.keyword in f.clauses]
        if not owners:
            errors.add(clause.span, f"no design family takes '{clause.keyword}' in this version",
                       f"{_a(family.title)} design takes: {', '.join(family.clauses)} (docs/language.md lists "
                       "what each family takes)")
            continue
        titles = " or ".join(f.title for f in owners)
        declare = " or ".join(f"'analysis {f.name}'" for f in owners)
        errors.add(clause.span, f"'{clause.keyword}' does not apply to {_a(family.title)} design",
                   f"{_a(family.title)} design takes: {', '.join(family.clauses)}; "
                   f"'{clause.keyword}' belongs to {titles} designs: declare {declare}")


def check_declared(design: n.Design, family: Family, errors: ErrorCollector) -> None:
    """Every answer form, condition and analysis option key of the design is one its family declares; the
    family's own checks then judge the values."""
    for answer in _answers(design):
        _check_form(answer.span, answer.kind, f"answer '{answer.kind}'", family, lambda f: f.answers, errors)
        for number, token in enumerate(answer.tokens, start=1):
            if not token.strip():
                errors.add(answer.span, f"answer token {number} is empty",
                           'write the text the model answers with, e.g. choice "A" | "B"')
    names = {form.name for form in family.conditions}
    for cond in CONDITIONS.value(design) or () if ANY not in names else ():
        if cond.name not in names:
            _unknown_condition(cond, family, errors)
    analysis = ANALYSIS.value(design)
    keys = [form.name for form in family.analysis_options]
    for option in analysis[1] if analysis is not None else ():
        if option.name not in keys:
            takes = ", ".join(f.written for f in family.analysis_options) or "no options"
            errors.add(option.span, f"unknown analysis option '{option.name}'",
                       _close(option.name, keys) or f"analysis {family.name} takes: {takes}")


def _answers(design: n.Design) -> list[n.AnswerSpec]:
    """The design's answer forms, in whichever clauses they are written (an `answer` clause, the probes of
    a `probes` clause, ...)."""
    return [answer for clause in design.clauses for answer in _answer_forms(clause.value)]


def _answer_forms(value: object) -> Iterator[n.AnswerSpec]:
    if isinstance(value, n.AnswerSpec):
        yield value
    elif isinstance(value, n.Probe):
        yield value.answer
    elif isinstance(value, tuple):
        for item in value:
            yield from _answer_forms(item)


def _check_form(span: Span, name: str, what: str, family: Family, forms: Callable[[Family], tuple[Form, ...]],
                errors: ErrorCollector) -> None:
    """`name` is one of the family's forms; else an error naming what it takes and who takes `name`."""
    if name in {form.name for form in forms(family)}:
        return
    takes = ", ".join(form.written for form in forms(family)) or "none"
    owners = _owners(name, family, forms)
    where = (f"; {what} belongs to {' or '.join(f.title for f in owners)} designs: declare "
             f"{' or '.join(repr('analysis ' + f.name) for f in owners)}" if owners
             else f"; no design family takes {what} in this version")
    errors.add(span, f"{_a(family.title)} design does not take {what}", f"it takes: {takes}{where}")


def _unknown_condition(cond: n.ConditionRef, family: Family, errors: ErrorCollector) -> None:
    takes = ", ".join(form.written for form in family.conditions)
    hint = _close(cond.name, [form.name for form in family.conditions]) or f"it takes: {takes}"
    owners = _owners(cond.name, family, lambda f: f.conditions)
    if owners:
        hint += f"; '{cond.name}' is a condition of {' or '.join(f.title for f in owners)} designs"
    errors.add(cond.span, f"unknown condition '{cond.key}' for {_a(family.title)} design", hint)


def _owners(name: str, family: Family, forms: Callable[[Family], tuple[Form, ...]]) -> list[Family]:
    """The other families that declare a form of this name."""
    return [f for f in registry.all_families() if f.name != family.name and name in {x.name for x in forms(f)}]


def _close(name: str, candidates: list[str]) -> str | None:
    """A did-you-mean for a near miss only (a list of every name is said better by the caller)."""
    hint = did_you_mean(name, candidates)
    return hint if hint is not None and hint.startswith("did you mean") else None


def _a(word: str) -> str:
    return ("an " if word[0] in "aeiou" else "a ") + word
