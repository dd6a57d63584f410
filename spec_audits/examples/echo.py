"""The worked example of docs/families.md: a whole design family in one module, written against the public API.

It imports spec_audits.sdk and nothing else of spec, and installs like any other through an entry point:

    [project.entry-points."spec_audits.families"]
    echo = "spec_audits.examples.echo:FAMILY"

`analysis echo` designs ask the prompt template once per named condition, three times over, and record the
confidence a reply states (`Confidence: 80`) besides its answer, through a reader the contract validates;
the scorer counts the answers per item with their mean stated confidence, and the report shows that table.
tests/families/echo/test_echo.py installs it through the entry point, compiles, runs it on the loopback stub,
scores and reports it.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from spec_audits.sdk import (
    Compiled,
    CompiledText,
    DesignContext,
    Document,
    ErrorCollector,
    Family,
    Form,
    Heading,
    Reader,
    ResultRow,
    Table,
    TypedDesign,
    check_render,
    compile_text,
    nodes,
    read_results,
)

CONFIDENCE = Reader(name="confidence", after="Confidence:", kind="int", low=0, high=100)
"""What a reply states besides its answer, recorded in results.jsonl `recorded` (null when it states none)."""


@dataclass(frozen=True)
class EchoDesign:
    design: nodes.Design
    conditions: tuple[str, ...]
    prompt: nodes.TemplateDef


@dataclass(kw_only=True)
class CompiledEcho(Compiled):
    """What emit reads: Compiled's fields (name, span, analysis, balance keys, ...), the summary and the rows."""

    resolved: EchoDesign
    prompt: CompiledText

    def summary(self) -> str:
        return f"{len(self.resolved.conditions)} conditions"

    def rows(self) -> Iterator[dict[str, Any]]:
        for condition in self.resolved.conditions:
            yield {"messages": [{"role": "user", "content": self.prompt.render({"condition": condition})}],
                   "samples": 3, "cell": {"condition": condition}, "answers": {"A": "first", "B": "second"},
                   "decode": {"max_tokens": 16}, "read": [CONFIDENCE.model_dump(exclude_none=True)]}


def check(design: TypedDesign, context: DesignContext, errors: ErrorCollector) -> EchoDesign | None:
    if design.conditions is None or design.prompt is None:
        errors.add(design.span, f"echo design '{design.name}' needs 'conditions' and 'prompt'")
        return None
    text = context.tables.lookup(context.tables.texts, design.prompt, "template", errors)
    names = tuple(c.name for c in design.conditions)
    return EchoDesign(design.node, names, text) if text is not None else None


def prepare(resolved: EchoDesign, seed: int, errors: ErrorCollector) -> CompiledEcho | None:
    prompt = compile_text(resolved.prompt.text, f"template '{resolved.prompt.name}'", {"condition"}, errors)
    if prompt is None or check_render(prompt, {"condition": resolved.conditions[0]}, errors) is None:
        return None
    return CompiledEcho(resolved=resolved, prompt=prompt, name=resolved.design.name, span=resolved.design.span,
                        analysis={"family": "echo"}, balance_keys=("condition",))


def score(run_dir: Path, out: Path, options: dict[str, Any]) -> list[str]:
    results = read_results(run_dir / "results.jsonl")
    counts = Counter((r.item_id, r.outcome) for r in results)
    out.mkdir(parents=True, exist_ok=True)
    table = [{"item": item, "outcome": outcome, "answers": k,
              "confidence": _mean_confidence([r for r in results if (r.item_id, r.outcome) == (item, outcome)])}
             for (item, outcome), k in sorted(counts.items())]
    summary = {"family": "echo", "answers": table}
    (out / "summary.json").write_text(json.dumps(summary), encoding="utf-8")
    return [f"{sum(counts.values())} echo answers scored -> {out}"]


def _mean_confidence(results: list[ResultRow]) -> float | None:
    """The mean confidence the replies state, over those that state one; None when none does."""
    stated = [value for r in results if isinstance(value := (r.recorded or {}).get(CONFIDENCE.name), int)]
    return sum(stated) / len(stated) if stated else None


def report(score_dir: Path, plots_dir: Path) -> Document:
    summary = json.loads((score_dir / "summary.json").read_text(encoding="utf-8"))
    rows = [[a["item"], str(a["outcome"]), str(a["answers"]), "none stated" if a["confidence"] is None
             else f"{a['confidence']:.1f}"] for a in summary["answers"]]
    header = ["item", "outcome", "answers", "mean stated confidence"]
    return Document("Echo", [Heading("Answers per item"), Table(header, rows)])


FAMILY = Family(name="echo", title="echo", clauses=("conditions", "prompt", "analysis"), answers=(),
                conditions=(Form("*", "NAME, ..."),), analysis_options=(), check=check, prepare=prepare, score=score,
                report=report)
