"""The `generator` block of a conditional-bias spec, resolved: what `spec generate` writes a bank with.

```
generator bank_turns:
  analysis bias_decomposition
  from scenarios                      # one row per (target bias, scenario)
  humans "Anchoring|...|Status Quo Bias"
  model "openai/gpt-4o"
  prompt persona_turn                 # template: row, human, definition, intensity, turns, feedback
  neutral neutral_turn                # template: row
  persona intensity 0.7, turns 1
  decode temperature 1.0, max_tokens 200
  jury "openai/gpt-4o-mini", "anthropic/claude-3-5-haiku-20241022", "gemini/gemini-1.5-flash"
  accept target >= 3.0, purity >= 1.5, naturalness >= 3.0, blind >= 0.667
  retries 3 feedback retry_note       # template: row, human, problems
  write "data/cognitive_bias/bank.generated.csv"
```
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from spec_audits.compiler import nodes as n
from spec_audits.compiler.check import decode_options
from spec_audits.compiler.data_source import Row, read_rows
from spec_audits.compiler.errors import ErrorCollector, did_you_mean
from spec_audits.compiler.templates import CompiledText, compile_text
from spec_audits.families.interface import DesignContext

CRITERIA = ("target", "purity", "naturalness", "blind")
PERSONA = ("intensity", "turns")
REQUIRED = ("from", "humans", "model", "prompt", "neutral", "jury", "accept", "write")
TEMPLATE_NAMES = {"prompt": {"row", "human", "definition", "intensity", "turns", "feedback"},
                  "neutral": {"row"}, "feedback": {"row", "human", "problems"}}


@dataclass(frozen=True)
class Generator:
    """A checked generator block with its templates compiled and its input rows read."""

    name: str
    rows: list[Row]
    humans: tuple[str, ...]
    model: str
    prompt: CompiledText
    neutral: CompiledText
    feedback: CompiledText | None
    persona: dict[str, Any]
    decode: dict[str, Any]
    jury: tuple[str, ...]
    accept: dict[str, float]
    retries: int
    out: Path
    seed: int


def resolve_generator(block: n.GeneratorDef, context: DesignContext, errors: ErrorCollector) -> Generator | None:
    before = len(errors.diagnostics)
    for keyword in REQUIRED:
        if block.get(keyword) is None:
            errors.add(block.span, f"generator '{block.name}' has no '{keyword}' clause",
                       "see the generator block of specs/cognitive_bias.spec")
    if len(errors.diagnostics) > before:
        return None
    texts = {k: _template(block, k, context, errors) for k in ("prompt", "neutral")}
    retry = block.get("retries")  # `retries N [feedback TEMPLATE]`, as the AST builds it
    retries, feedback_ref = cast(tuple[int, n.Ref | None], retry.value) if retry is not None else (0, None)
    feedback = _compiled(feedback_ref, "feedback", context, errors) if feedback_ref is not None else None
    accept = _accept(_required(block, "accept"), errors)
    persona = _persona(block.get("persona"), errors)
    decode = decode_options(n.Design(span=block.span, name=block.name, clauses=block.clauses), errors)
    humans = tuple(cast(n.Text, _required(block, "humans").value).value.split("|"))
    jury_clause = _required(block, "jury")
    jury = tuple(t.value for t in cast(tuple[n.Text, ...], jury_clause.value))
    if len(jury) < 1:
        errors.add(jury_clause.span, "the jury needs at least one model")
    source = _source(block, context.spec, errors)
    rows = read_rows(source, ("bias",), context.seed, errors) if source is not None else None
    prompt, neutral = texts["prompt"], texts["neutral"]
    if len(errors.diagnostics) > before or rows is None or prompt is None or neutral is None:
        return None
    write = cast(n.Text, _required(block, "write").value)
    return Generator(block.name, rows, humans, cast(n.Text, _required(block, "model").value).value, prompt,
                     neutral, feedback, persona, decode, jury, accept, retries,
                     Path(block.span.file).parent / write.value, context.seed)


def _required(block: n.GeneratorDef, keyword: str) -> n.Clause:
    """A clause of REQUIRED, which resolve_generator has found. A generator clause's value is untyped in the
    AST: its shape is what compiler/ast_designs.py's g_KEYWORD builds."""
    clause = block.get(keyword)
    if clause is None:
        raise KeyError(f"generator '{block.name}' has no '{keyword}' clause")
    return clause


def _source(block: n.GeneratorDef, spec: n.Spec, errors: ErrorCollector) -> n.DataSource | None:
    ref = cast(n.Ref, _required(block, "from").value)
    sources = {d.name: d for d in spec.data}
    if ref.name not in sources:
        errors.add(ref.span, f"unknown data source '{ref.name}'", did_you_mean(ref.name, sources))
        return None
    return sources[ref.name]


def _template(block: n.GeneratorDef, keyword: str, context: DesignContext,
              errors: ErrorCollector) -> CompiledText | None:
    return _compiled(cast(n.Ref, _required(block, keyword).value), keyword, context, errors)


def _compiled(ref: n.Ref, role: str, context: DesignContext, errors: ErrorCollector) -> CompiledText | None:
    text = context.tables.lookup(context.tables.texts, ref, "template", errors)
    if text is None:
        return None
    return compile_text(text.text, f"template '{ref.name}'", TEMPLATE_NAMES[role], errors)


def _accept(clause: n.Clause, errors: ErrorCollector) -> dict[str, float]:
    thresholds = {}
    for name, op, value in cast(tuple[tuple[n.Scalar, n.Scalar, n.Scalar], ...], clause.value):
        if name not in CRITERIA:
            errors.add(clause.span, f"unknown acceptance criterion '{name}'", did_you_mean(str(name), CRITERIA))
        elif op != ">=":
            errors.add(clause.span, f"acceptance criteria are minimums: write {name} >= {value}")
        thresholds[str(name)] = float(value)
    return thresholds


def _persona(clause: n.Clause | None, errors: ErrorCollector) -> dict[str, Any]:
    persona: dict[str, Any] = {"intensity": 0.7, "turns": 1}
    for option in cast(tuple[n.Option, ...], clause.value) if clause is not None else ():
        if option.name not in PERSONA:
            errors.add(option.span, f"unknown persona setting '{option.name}'", did_you_mean(option.name, PERSONA))
        persona[option.name] = option.value
    return persona
