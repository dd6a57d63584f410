"""The worked example of docs/families.md: a whole design family in one module, written against the public API.

It imports spec_audits/sdk.py and nothing else of spec, and installs like any other through an entry point:

    [project.entry-points."spec_audits.families"]
    echo = "spec_audits.examples.echo:FAMILY"

`analysis echo` designs ask the prompt template once per named condition, three times over; the scorer
counts the answers per item and the report shows that table. tests/families/echo/test_echo.py installs it
through the entry point, compiles, runs it on the loopback stub, scores and reports it.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from spec_audits.sdk import (
    CompiledText,
    DesignContext,
    Document,
    ErrorCollector,
    Family,
    Form,
    Heading,
    Span,
    Table,
    TypedDesign,
    check_render,
    compile_text,
    nodes,
    read_results,
)


@dataclass(frozen=True)
class EchoDesign:
    design: nodes.Design
    conditions: tuple[str, ...]
    prompt: nodes.TemplateDef


@dataclass
class CompiledEcho:
    resolved: EchoDesign
    prompt: CompiledText
    name: str
    span: Span
    mode: str = "sample"
    balance_keys: tuple[str, ...] = ("condition",)
    analysis: dict[str, Any] = field(default_factory=lambda: {"family": "echo"})
    shared: dict[str, str] = field(default_factory=dict)
    served: dict[str, list[Any]] = field(default_factory=dict)

    def summary(self) -> str:
        return f"{len(self.resolved.conditions)} conditions"

    def rows(self) -> Iterator[dict[str, Any]]:
        for condition in self.resolved.conditions:
            yield {"messages": [{"role": "user", "content": self.prompt.render({"condition": condition})}],
                   "samples": 3, "cell": {"condition": condition}, "answers": {"A": "first", "B": "second"},
                   "decode": {"max_tokens": 2}}


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
    return CompiledEcho(resolved, prompt, resolved.design.name, resolved.design.span)


def score(run_dir: Path, out: Path, options: dict[str, Any]) -> list[str]:
    counts = Counter((r.item_id, r.outcome) for r in read_results(run_dir / "results.jsonl"))
    out.mkdir(parents=True, exist_ok=True)
    table = [{"item": item, "outcome": outcome, "answers": k} for (item, outcome), k in sorted(counts.items())]
    summary = {"family": "echo", "answers": table}
    (out / "summary.json").write_text(json.dumps(summary), encoding="utf-8")
    return [f"{sum(counts.values())} echo answers scored -> {out}"]


def report(score_dir: Path, plots_dir: Path) -> Document:
    summary = json.loads((score_dir / "summary.json").read_text(encoding="utf-8"))
    rows = [[a["item"], str(a["outcome"]), str(a["answers"])] for a in summary["answers"]]
    return Document("Echo", [Heading("Answers per item"), Table(["item", "outcome", "answers"], rows)])


FAMILY = Family(name="echo", title="echo", clauses=("conditions", "prompt", "analysis"), answers=(),
                conditions=(Form("*", "NAME, ..."),), analysis_options=(), check=check, prepare=prepare, score=score,
                report=report)
