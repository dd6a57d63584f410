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

from pathlib import Path
from typing import Any

from spec_audits.families.cognitive_bias import clauses as gc
from spec_audits.sdk import (
    CompiledText,
    DesignContext,
    ErrorCollector,
    Record,
    Row,
    checked_decode,
    compile_text,
    did_you_mean,
    read_rows,
)
from spec_audits.sdk import nodes as n

CRITERIA = ("target", "purity", "naturalness", "blind")
PERSONA = ("intensity", "turns")
REQUIRED = ("from", "humans", "model", "prompt", "neutral", "jury", "accept", "write")
TEMPLATE_NAMES = {"prompt": {"row", "human", "definition", "intensity", "turns", "feedback"},
                  "neutral": {"row"}, "feedback": {"row", "human", "problems"}}


class Generator(Record):
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
    # one call per clause, not a generator over them: each value keeps its own type
    humans, model = gc.HUMANS.value(block), gc.MODEL.value(block)
    jury, write = gc.JURY.value(block), gc.WRITE.value(block)
    prompt, neutral, source_ref = gc.PROMPT.value(block), gc.NEUTRAL.value(block), gc.FROM.value(block)
    if len(errors.diagnostics) > before or None in (humans, model, jury, write, prompt, neutral, source_ref):
        return None
    assert humans and model and jury is not None and write and prompt and neutral and source_ref  # just checked
    texts = {"prompt": _compiled(prompt, "prompt", context, errors), "neutral": _compiled(neutral, "neutral", context,
                                                                                          errors)}
    retries, feedback_ref = gc.RETRIES.value(block) or (0, None)
    feedback = _compiled(feedback_ref, "feedback", context, errors) if feedback_ref is not None else None
    accept = _accept(block, errors)
    persona = _persona(gc.PERSONA.value(block) or (), errors)
    decode = checked_decode(gc.DECODE.value(block) or (), errors)
    jury_clause = block.get(gc.JURY.keyword)
    if len(jury) < 1 and jury_clause is not None:
        errors.add(jury_clause.span, "the jury needs at least one model")
    source = _source(source_ref, context.spec, errors)
    rows = read_rows(source, ("bias",), context.seed, errors) if source is not None else None
    prompt_text, neutral_text = texts["prompt"], texts["neutral"]
    if len(errors.diagnostics) > before or rows is None or prompt_text is None or neutral_text is None:
        return None
    return Generator(block.name, rows, tuple(humans.value.split("|")), model.value, prompt_text, neutral_text,
                     feedback, persona, decode, tuple(t.value for t in jury), accept, retries,
                     Path(block.span.file).parent / write.value, context.seed)


def _source(ref: n.Ref, spec: n.Spec, errors: ErrorCollector) -> n.DataSource | None:
    sources = {d.name: d for d in spec.data}
    if ref.name not in sources:
        errors.add(ref.span, f"unknown data source '{ref.name}'", did_you_mean(ref.name, sources))
        return None
    return sources[ref.name]


def _compiled(ref: n.Ref, role: str, context: DesignContext, errors: ErrorCollector) -> CompiledText | None:
    text = context.tables.lookup(context.tables.texts, ref, "template", errors)
    if text is None:
        return None
    return compile_text(text.text, f"template '{ref.name}'", TEMPLATE_NAMES[role], errors)


def _accept(block: n.GeneratorDef, errors: ErrorCollector) -> dict[str, float]:
    thresholds: dict[str, float] = {}
    clause, bands = block.get(gc.ACCEPT.keyword), gc.ACCEPT.value(block)
    if clause is None or bands is None:
        return thresholds
    for name, op, value in bands:
        if name not in CRITERIA:
            errors.add(clause.span, f"unknown acceptance criterion '{name}'", did_you_mean(str(name), CRITERIA))
        elif op != ">=":
            errors.add(clause.span, f"acceptance criteria are minimums: write {name} >= {value}")
        thresholds[str(name)] = float(value)
    return thresholds


def _persona(options: tuple[n.Option, ...], errors: ErrorCollector) -> dict[str, Any]:
    persona: dict[str, Any] = {"intensity": 0.7, "turns": 1}
    for option in options:
        if option.name not in PERSONA:
            errors.add(option.span, f"unknown persona setting '{option.name}'", did_you_mean(option.name, PERSONA))
        persona[option.name] = option.value
    return persona
