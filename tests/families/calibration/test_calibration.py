"""The calibration example (spec_audits/examples/calibration.py), installed through its entry point as a
plug-in would be: a clause with a shape of its own, a reader of the reply's stated confidence, a score option,
and a reliability table whose expected calibration error is checked against a hand computation."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from lark import Token

from spec_audits.dispatch import registry
from spec_audits.examples.calibration import Scale, reliability
from spec_audits.sdk import Builder, Leaf, Span, nodes
from tests.plugins import install, invoke, run_on_stub
from tests.stub_server import StubConfig

QUIZ = "id,question,a,b,correct\nq1,Quest1?,x,y,A\nq2,Quest2?,x,y,B\nq3,Quest3?,x,y,A\nq4,Quest4?,x,y,B\n"
SPEC = '''suite quiz "Quiz"
seed 1
data quiz from "quiz.csv" key id
template ask """
{{ item.question }} A: {{ item.a }} B: {{ item.b }}
Say how sure you are, as 'Confidence: N' (0-100), then answer on the last line as 'Answer: A' or 'Answer: B'.
"""
design quiz:
  items quiz
  prompt ask
  answer choice "A" | "B"
  confidence "Confidence:" 0..100
  analysis calibration
'''
# q1 right at 90, q2 wrong at 80, q3 right at 60, q4 right at 30; q5 would be a reply stating none
REPLIES = (("Quest1", "Confidence: 90\nAnswer: A"), ("Quest2", "Confidence: 80\nAnswer: A"),
           ("Quest3", "Confidence: 60\nAnswer: A"), ("Quest4", "Confidence: 30\nAnswer: B"))


@pytest.fixture
def quiz(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    site = tmp_path / "site"
    site.mkdir()
    monkeypatch.syspath_prepend(str(site))
    install(site, "spec-calibration", {"calibration": "spec_audits.examples.calibration:FAMILY"}, {})
    (tmp_path / "quiz.csv").write_text(QUIZ, encoding="utf-8")
    spec = tmp_path / "quiz.spec"
    spec.write_text(SPEC, encoding="utf-8")
    yield spec
    registry.unregister("calibration")


def test_the_example_compiles_runs_on_the_stub_and_scores(quiz: Path, tmp_path: Path) -> None:
    checked = invoke("check", str(quiz))
    assert checked.output == f"{quiz}: design 'quiz' is valid: 4 items, confidence on 0..100\n"
    suite, run_dir = tmp_path / "suite", tmp_path / "run"
    assert invoke("compile", str(quiz), "-o", str(suite)).exit_code == 0
    ran = run_on_stub(suite, run_dir, StubConfig(replies=REPLIES))
    assert ran.exit_code == 0, ran.output
    scored = invoke("score", str(run_dir), "--bins", "2")
    assert scored.exit_code == 0 and scored.exception is None, scored.output
    # bin [0, .5): q4, right at .3; bin [.5, 1]: q1, q2, q3, two of three right at a mean of .7667
    lines = scored.output.splitlines()  # the headline, the report's first table, what to run next
    assert lines[:6] == [f"ECE 0.250 over 4 answers (0 without an answer and a confidence left out) -> "
                         f"{run_dir / 'score'}", "", "stated confidence  answers  mean confidence  accuracy",
                         "0.00-0.50          1        0.300            1.000",
                         "0.50-1.00          3        0.767            0.667", ""]
    summary = json.loads((run_dir / "score" / "summary.json").read_text())
    assert summary["ece"] == pytest.approx(0.25) and [b["answers"] for b in summary["bins"]] == [1, 3]
    reported = invoke("report", str(run_dir / "score"))
    assert reported.exit_code == 0, reported.output
    assert "| 0.50-1.00 | 3 | 0.767 | 0.667 |" in (run_dir / "score" / "report.md").read_text()


def test_a_wrong_correct_answer_and_an_empty_scale_are_located_in_one_pass(quiz: Path) -> None:
    (quiz.parent / "quiz.csv").write_text(QUIZ.replace("q2,Quest2?,x,y,B", "q2,Quest2?,x,y,C"), encoding="utf-8")
    quiz.write_text(SPEC.replace("0..100", "100..0"), encoding="utf-8")
    result = invoke("check", str(quiz))
    assert result.exit_code == 1 and isinstance(result.exception, SystemExit)
    assert [line for line in result.output.splitlines() if ": error: " in line] == [
        f"{quiz}:9:9: error: item 'q2': its correct answer 'C' is not one of the answer's tokens (A, B)",
        f"{quiz}:12:14: error: the confidence scale 100..0 is empty"]


def test_the_plugins_shape_receives_spec_leaves_not_lark_tokens(quiz: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The `confidence` shape of the installed plug-in is handed its text as a Text node and its numbers as
    spec's Leaf: the terminal, where it is, and its typed value."""
    seen: list[list[Any]] = []
    build = Scale.build

    def spy(self: Scale, at: Builder, span: Span, children: list[Any]) -> tuple[nodes.Text, int, int]:
        seen.append(children)
        return build(self, at, span, children)

    monkeypatch.setattr(Scale, "build", spy)
    assert invoke("check", str(quiz)).exit_code == 0
    label, low, high = seen[0]
    assert isinstance(label, nodes.Text) and label.value == "Confidence:"
    assert [(type(leaf), isinstance(leaf, Token), leaf.kind, leaf.span) for leaf in (low, high)] == [
        (Leaf, False, "NUMBER", Span(str(quiz), 12, 28, 12, 29)),
        (Leaf, False, "NUMBER", Span(str(quiz), 12, 31, 12, 34))]
    assert (low.whole(), high.whole()) == (0, 100)


def test_the_reliability_table_and_ece_by_hand() -> None:
    table, ece = reliability([(0.95, True), (0.95, False), (0.15, False), (0.55, True)], 10)
    assert [row["answers"] for row in table] == [0, 1, 0, 0, 0, 1, 0, 0, 0, 2]
    assert ece == pytest.approx(0.25 * 0.15 + 0.25 * 0.45 + 0.5 * 0.45)
    assert reliability([], 3) == ([{"low": i / 3, "high": (i + 1) / 3, "answers": 0, "confidence": None,
                                    "accuracy": None} for i in range(3)], None)
