"""A worked example of docs/families.md: a calibration audit, written against the public API alone.

Is a model as often right as it says it is sure? Each item of a data source is asked as a two-option question;
the reply states a confidence on a scale (`Confidence: 80`) and then its answer. The scorer bins the stated
confidences (`spec score --bins N`) and writes a reliability table, each bin's mean confidence beside how
often its answers were right, and the expected calibration error, ECE = sum over bins of (n_b / N) * |accuracy_b
- confidence_b|. It installs like any other family:

    [project.entry-points."spec_audits.families"]
    calibration = "spec_audits.examples.calibration:FAMILY"

    data quiz from "quiz.csv" key id             # columns: id, question, a, b, correct (A or B)
    template ask "{{ item.question }} A: {{ item.a }} B: {{ item.b }} ..."
    design quiz:
      items quiz
      prompt ask
      answer choice "A" | "B"
      confidence "Confidence:" 0..100
      analysis calibration
"""

from __future__ import annotations

import csv
import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click

from spec_audits.sdk import (
    Builder,
    ClauseSpec,
    Compiled,
    CompiledText,
    DesignContext,
    Document,
    ErrorCollector,
    Family,
    Form,
    Heading,
    Name,
    Paragraph,
    Reader,
    Row,
    Shape,
    Span,
    Table,
    TypedDesign,
    check_render,
    compile_text,
    key_of,
    nodes,
    read_results,
    read_rows,
    read_run,
)


@dataclass(frozen=True)
class Scale(Shape[tuple[nodes.Text, int, int]]):
    """`confidence "LABEL" LOW..HIGH`: a shape of the family's own, written in the grammar's building blocks."""

    GRAMMAR = 'text NUMBER ".." NUMBER'
    WRITTEN = '"LABEL" LOW..HIGH'

    def build(self, at: Builder, span: Span, children: list[Any]) -> tuple[nodes.Text, int, int]:
        return (children[0], at.whole(children[1]), at.whole(children[2]))


ITEMS = ClauseSpec("items", Name(), "a data source whose rows are the items")
CONFIDENCE = ClauseSpec("confidence", Scale(), "the label a reply states its confidence after, and its scale")
ANSWER_LINE = "Answer:"  # the reply's last line: `Answer: A`, read by the runner


@dataclass(frozen=True)
class Quiz:
    name: str
    span: Span
    items: list[tuple[str, Row]]  # (key, row)
    prompt: nodes.TemplateDef
    tokens: tuple[str, ...]
    reader: Reader


@dataclass(kw_only=True)
class CompiledQuiz(Compiled):
    quiz: Quiz
    prompt: CompiledText

    def summary(self) -> str:
        return f"{len(self.quiz.items)} items, confidence on {self.quiz.reader.low:g}..{self.quiz.reader.high:g}"

    def rows(self) -> Iterator[dict[str, Any]]:
        for key, item in self.quiz.items:
            yield {"messages": [{"role": "user", "content": self.prompt.render({"item": item})}], "samples": 1,
                   "cell": {"item": key}, "answers": {token: token for token in self.quiz.tokens},
                   "decode": {"max_tokens": 64, "answer_line": ANSWER_LINE}, "expect": {"correct": item["correct"]},
                   "read": [self.quiz.reader.model_dump(exclude_none=True)]}


def check(design: TypedDesign, context: DesignContext, errors: ErrorCollector) -> Quiz | None:
    ref, scale = design.get(ITEMS), design.get(CONFIDENCE)
    if ref is None or scale is None or design.prompt is None or design.answer is None:
        errors.add(design.span, f"calibration design '{design.name}' needs items, prompt, answer and confidence",
                   'add: items DATA, prompt TEMPLATE, answer choice "A" | "B", confidence "Confidence:" 0..100')
        return None
    label, low, high = scale
    if low >= high:
        errors.add(label.span, f"the confidence scale {low}..{high} is empty", "write it low..high: 0..100")
    source = context.tables.lookup({d.name: d for d in context.spec.data}, ref, "data source", errors)
    prompt = context.tables.lookup(context.tables.texts, design.prompt, "template", errors)
    rows = read_rows(source, ("correct",), context.seed, errors) if source is not None else None
    if rows is None or prompt is None:
        return None
    tokens = tuple(design.answer.tokens)
    for row in rows:
        if row["correct"] not in tokens:
            errors.add(ref.span, f"item {key_of(source, row)!r}: its correct answer {row['correct']!r} is not one of "
                       f"the answer's tokens ({', '.join(tokens)})", "fix the data's `correct` column")
    if errors.diagnostics:
        return None
    reader = Reader(name="confidence", after=label.value, kind="number", low=low, high=high)
    items = [(key_of(source, row), row) for row in rows]
    return Quiz(design.name, design.span, items, prompt, tokens, reader)


def prepare(quiz: Quiz, seed: int, errors: ErrorCollector) -> CompiledQuiz | None:
    prompt = compile_text(quiz.prompt.text, f"template '{quiz.prompt.name}'", {"item"}, errors)
    if prompt is None or check_render(prompt, {"item": quiz.items[0][1]}, errors) is None:
        return None
    return CompiledQuiz(quiz=quiz, prompt=prompt, name=quiz.name, span=quiz.span, analysis={"family": "calibration"},
                        balance_keys=("item",))


def reliability(answers: list[tuple[float, bool]], bins: int) -> tuple[list[dict[str, Any]], float | None]:
    """The reliability table of (confidence in [0, 1], right) pairs over `bins` equal bins, and the ECE (None
    without answers): each bin's count, mean confidence and accuracy."""
    table: list[dict[str, Any]] = []
    for index in range(bins):
        inside = [(p, right) for p, right in answers if min(int(p * bins), bins - 1) == index]
        confidence = sum(p for p, _ in inside) / len(inside) if inside else None
        accuracy = sum(right for _, right in inside) / len(inside) if inside else None
        table.append({"low": index / bins, "high": (index + 1) / bins, "answers": len(inside),
                      "confidence": confidence, "accuracy": accuracy})
    if not answers:
        return table, None
    ece = sum(row["answers"] / len(answers) * abs(row["accuracy"] - row["confidence"])
              for row in table if row["answers"])
    return table, ece


def score(run_dir: Path, out: Path, options: dict[str, Any]) -> list[str]:
    _, suite = read_run(run_dir)
    rows = {row.id: row for row in suite.rows}
    answers, unstated = [], 0
    for result in read_results(run_dir / "results.jsonl"):
        row, stated = rows[result.item_id], (result.recorded or {}).get("confidence")
        if result.answer is None or not isinstance(stated, int | float) or not row.read:
            unstated += 1
            continue
        low, high = row.read[0].low or 0.0, row.read[0].high or 100.0
        answers.append(((stated - low) / (high - low), result.answer == (row.expect or {}).get("correct")))
    table, ece = reliability(answers, int(options.get("bins") or 10))
    out.mkdir(parents=True, exist_ok=True)
    summary = {"family": "calibration", "ece": ece, "answers": len(answers), "left_out": unstated, "bins": table}
    (out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    with (out / "reliability.csv").open("w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(table[0]))
        writer.writeheader()
        writer.writerows(table)
    said = "no ECE: no answer states a confidence" if ece is None else f"ECE {ece:.3f} over {len(answers)} answers"
    return [f"{said} ({unstated} without an answer and a confidence left out) -> {out}"]


def report(score_dir: Path, plots_dir: Path) -> Document:
    summary = json.loads((score_dir / "summary.json").read_text(encoding="utf-8"))
    ece = "none (no answer states a confidence)" if summary["ece"] is None else f"{summary['ece']:.3f}"
    rows = [[f"{b['low']:.2f}-{b['high']:.2f}", str(b["answers"]), _share(b["confidence"]), _share(b["accuracy"])]
            for b in summary["bins"]]
    return Document("Calibration", [
        Heading("Reliability"),
        Paragraph(f"Expected calibration error {ece}, over {summary['answers']} answers; {summary['left_out']} "
                  "replies without an answer and a stated confidence are left out."),
        Table(["stated confidence", "answers", "mean confidence", "accuracy"], rows)])


def _share(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


FAMILY = Family(
    name="calibration", title="calibration", clauses=("items", "prompt", "answer", "confidence", "analysis"),
    answers=(Form("choice", 'choice "A" | "B"'),), conditions=(), analysis_options=(), check=check,
    prepare=prepare, score=score, report=report, syntax=(ITEMS, CONFIDENCE), docs="docs/families.md",
    score_flags=(click.Option(["--bins"], type=click.IntRange(1, 100), default=10, show_default=True,
                              help="Confidence bins of the reliability table (calibration runs)."),),
)
