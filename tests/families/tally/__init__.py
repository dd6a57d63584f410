"""A test family that adds, from this one module, a design keyword with an argument shape of its own
(`repeat N times`), a `spec score` option (`--shout`) and a kind of published table (`spec score --tallies
FILE`). Nothing outside this folder names it, and it imports spec's public API only (spec_audits.sdk):
tests/families/test_new_family.py installs it through the `spec_audits.families` entry-point group, as
another distribution would.

`analysis tally` designs ask the prompt template once per named condition, N times over; the scorer counts
the answers per condition, and a tallies table (CSV `condition,answers`) is scored the same way.
"""

from __future__ import annotations

import csv
import json
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click

from spec_audits import sdk
from spec_audits.sdk import (
    Compiled,
    CompiledText,
    DesignContext,
    Document,
    ErrorCollector,
    Family,
    Form,
    Heading,
    ScoreInputError,
    Span,
    Table,
    TableKind,
    TypedDesign,
    check_render,
    compile_text,
    read_results,
)


@dataclass(frozen=True)
class Times(sdk.Shape[int]):
    """`repeat N times`: a shape of this family's own, written in the grammar's building blocks."""

    GRAMMAR = 'NUMBER "times"'
    WRITTEN = "N times"

    def build(self, at: sdk.Builder, span: Span, children: list[sdk.Leaf]) -> int:
        return at.whole(children[0])


REPEAT = sdk.ClauseSpec("repeat", Times(), "how many times each condition is asked")


@dataclass(frozen=True)
class TallyDesign:
    name: str
    span: Span
    conditions: tuple[str, ...]
    prompt_name: str
    prompt: Any
    times: int


@dataclass(kw_only=True)
class CompiledTally(Compiled):
    resolved: TallyDesign
    prompt: CompiledText

    def summary(self) -> str:
        return f"{len(self.resolved.conditions)} conditions, {self.resolved.times} times each"

    def rows(self) -> Iterator[dict[str, Any]]:
        for condition in self.resolved.conditions:
            for turn in range(self.resolved.times):
                content = self.prompt.render({"condition": condition})
                yield {"messages": [{"role": "user", "content": content}], "samples": 1,
                       "cell": {"condition": condition, "turn": str(turn)}, "answers": {"A": "first", "B": "second"},
                       "decode": {"max_tokens": 2}}


def check(design: TypedDesign, context: DesignContext, errors: ErrorCollector) -> TallyDesign | None:
    times, clause = design.get(REPEAT), design.clause(REPEAT.keyword)
    if times is not None and clause is not None and times < 1:
        errors.add(clause.span, f"repeat needs at least 1 time, got {times}", "write: repeat 3 times")
    if design.conditions is None or design.prompt is None:
        errors.add(design.span, f"tally design '{design.name}' needs 'conditions' and 'prompt'")
        return None
    text = context.tables.lookup(context.tables.texts, design.prompt, "template", errors)
    if text is None or errors.diagnostics:
        return None
    return TallyDesign(design.name, design.span, tuple(cond.name for cond in design.conditions), text.name, text,
                       times or 1)


def prepare(resolved: TallyDesign, seed: int, errors: ErrorCollector) -> CompiledTally | None:
    prompt = compile_text(resolved.prompt.text, f"template '{resolved.prompt_name}'", {"condition"}, errors)
    if prompt is None or check_render(prompt, {"condition": resolved.conditions[0]}, errors) is None:
        return None
    return CompiledTally(resolved=resolved, prompt=prompt, name=resolved.name, span=resolved.span,
                         analysis={"family": "tally"}, balance_keys=("condition",))


def _write(counts: Counter[str], out: Path, options: dict[str, Any], what: str) -> list[str]:
    out.mkdir(parents=True, exist_ok=True)
    summary = {"family": "tally", "answers": dict(sorted(counts.items()))}
    (out / "summary.json").write_text(json.dumps(summary), encoding="utf-8")
    line = f"{sum(counts.values())} {what} tallied -> {out}"
    return [line.upper() if options.get("shout") else line]


def score(run_dir: Path, out: Path, options: dict[str, Any]) -> list[str]:
    return _write(Counter(str(r.outcome) for r in read_results(run_dir / "results.jsonl")), out, options, "answers")


def score_tallies(table: Path, out: Path, options: dict[str, Any]) -> list[str]:
    counts: Counter[str] = Counter()
    with table.open(encoding="utf-8", newline="") as handle:
        for number, row in enumerate(csv.DictReader(handle), start=2):
            answers = row.get("answers") or ""
            if not answers.isdigit():
                raise ScoreInputError(table, f"answers must be a whole number, got {answers!r}", row=number,
                                      column="answers")
            counts[row["condition"]] += int(answers)
    return _write(counts, out, options, "table answers")


def report(score_dir: Path, plots_dir: Path) -> Document:
    answers = json.loads((score_dir / "summary.json").read_text(encoding="utf-8"))["answers"]
    rows = [[outcome, str(count)] for outcome, count in answers.items()]
    return Document("Tally", [Heading("Answers"), Table(["outcome", "answers"], rows)])


FAMILY = Family(
    name="tally", title="tally", clauses=("repeat", "conditions", "prompt", "analysis"), answers=(),
    conditions=(Form("*", "NAME, ..."),), analysis_options=(), check=check, prepare=prepare, score=score,
    report=report, syntax=(REPEAT,),
    score_flags=(click.Option(["--shout"], is_flag=True, help="Print the tally in capitals."),),
    tables=(TableKind("tallies", "a tallies table", "Score a tallies table (CSV condition,answers).", score_tallies),),
)
