"""The shared design layer: the clauses every family's designs share, declared, parsed and resolved once
into a TypedDesign, which is what a family's checks receive.

The shared clauses are the ones most designs take (analysis, mode, system, prompt, answer, order,
samples, decode, followups, conditions, conversation); what each means beyond its typed value (which
modes, which orders, how a condition is read) stays the family's to judge. Everything a family takes
besides them it declares itself (`Family.syntax`, compiler/clauses.py) and reads with
`design.get(SPEC)`, typed by the spec's shape.
"""

from __future__ import annotations

from typing import Any, TypeVar

from spec_audits.base.records import Record
from spec_audits.compiler import clauses as c
from spec_audits.compiler import nodes as n
from spec_audits.compiler.check import Tables, checked_decode, first_values
from spec_audits.compiler.errors import ErrorCollector, Span, report_repeats

T = TypeVar("T")


class SamplesShape(Record, c.Shape[n.Samples]):
    """`samples N [split by NAME]`."""

    GRAMMAR = 'NUMBER ("split" "by" NAME)?'
    WRITTEN = "N [split by order]"

    def build(self, at: c.Builder, span: Span, children: list[c.Leaf]) -> n.Samples:
        split = at.ref(children[1]).name if len(children) > 1 else None
        return n.Samples(span=span, count=at.whole(children[0]), split_by=split)


ANALYSIS = c.ClauseSpec("analysis", c.NameOptions(), "the design's family and its analysis options")
MODE = c.ClauseSpec("mode", c.Name(), "how the answer is read: sample | logprob")
SYSTEM = c.ClauseSpec("system", c.Name(), "the system text")
PROMPT = c.ClauseSpec("prompt", c.Name(), "the prompt template")
ANSWER = c.ClauseSpec("answer", c.Answer(), "the answer form")
ORDER = c.ClauseSpec("order", c.Name(), "the display order of the options")
SAMPLES = c.ClauseSpec("samples", SamplesShape(), "replies per row")
DECODE = c.ClauseSpec("decode", c.Options(), "decode settings")
FOLLOWUPS = c.ClauseSpec("followups", c.Names(), "follow-up turns after the answer")
CONDITIONS = c.ClauseSpec("conditions", c.Conditions(), "the conditions compared")
CONVERSATION = c.ClauseSpec("conversation", c.Name(), "the conversation the design's rows are played through")
SHARED: c.Syntax = (ANALYSIS, MODE, SYSTEM, PROMPT, ANSWER, ORDER, SAMPLES, DECODE, FOLLOWUPS, CONDITIONS,
                    CONVERSATION)
"""The shared clauses: in the grammar whichever families are registered."""
EVERY_DESIGN = (CONVERSATION.keyword,)
"""Clauses every family's designs take, played by a shared stage (compiler/conversations.py)."""
GENERATOR_ANALYSIS = c.ClauseSpec("analysis", c.Name(), "the family that runs the generator", block="generator")
"""A `generator` block's `analysis NAME`: the family whose generator declarations read the rest of the block."""


class Analysis(Record):
    """`analysis NAME key value, ...`: the family named, the options as written and their values."""

    ref: n.Ref
    options: tuple[n.Option, ...]
    values: dict[str, Any]  # option name -> value, the first of a repeated one (the repeat is reported)
    span: Span  # the whole clause


class TypedDesign(Record):
    """A design with its shared clauses typed and resolved; a family's own clauses through `get`."""

    node: n.Design
    analysis: Analysis | None
    mode: n.Ref | None
    system: n.Ref | None
    prompt: n.Ref | None
    answer: n.AnswerSpec | None
    order: n.Ref | None
    samples: n.Samples | None
    decode: dict[str, Any]  # checked: every key known, every value in its domain
    followups: tuple[n.FollowUpDef, ...]  # resolved against the spec's follow-ups
    conditions: tuple[n.ConditionRef, ...] | None
    conversation: n.Ref | None

    @property
    def name(self) -> str:
        return self.node.name

    @property
    def span(self) -> Span:
        return self.node.span

    def get(self, spec: c.ClauseSpec[T]) -> T | None:
        """The typed value of a clause the family declared, or None when the design does not give it."""
        return spec.value(self.node)

    def clause(self, keyword: str) -> n.Clause | None:
        """The clause itself (for its span), or None."""
        return self.node.get(keyword)


def resolve_design(design: n.Design, tables: Tables, errors: ErrorCollector) -> TypedDesign:
    """The design's shared clauses typed; decode settings, follow-ups and repeated analysis options
    checked (each problem reported at its clause)."""
    followups = tuple(tables.lookup(tables.followups, ref, "followup", errors) for ref in FOLLOWUPS.value(design) or ())
    return TypedDesign(
        node=design, analysis=_analysis(design, errors), mode=MODE.value(design), system=SYSTEM.value(design),
        prompt=PROMPT.value(design), answer=ANSWER.value(design), order=ORDER.value(design),
        samples=SAMPLES.value(design), decode=checked_decode(DECODE.value(design) or (), errors),
        followups=tuple(f for f in followups if f is not None), conditions=CONDITIONS.value(design),
        conversation=CONVERSATION.value(design),
    )


def _analysis(design: n.Design, errors: ErrorCollector) -> Analysis | None:
    clause, value = design.get(ANALYSIS.keyword), ANALYSIS.value(design)
    if clause is None or value is None:
        return None
    ref, options = value
    report_repeats(((o.name, o.span) for o in options), "analysis option", errors)
    return Analysis(ref=ref, options=options, values=first_values(options), span=clause.span)
