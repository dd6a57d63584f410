"""Puzzle-solving designs: certified puzzles of both kinds per band, answered by their solution; a planted
solver that solves some bands is scored as solving exactly those; mistakes are located."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from spec_audits.cli import main
from spec_audits.compiler.dispatch.build import compile_file
from spec_audits.compiler.errors import SpecError
from spec_audits.contract.reader import read_suite
from spec_audits.puzzles import reprove
from tests.families.puzzle_solving import TINY, tiny
from tests.runner.test_puzzle_answers import Solver
from tests.runner.test_run_conversations import _run
from tests.support import repeat_message


@pytest.fixture(scope="session")
def suite(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("solving")
    compile_file(tiny(folder), folder / "suite")
    return folder / "suite"


def test_every_band_of_both_kinds_gets_certified_puzzles(suite: Path) -> None:
    rows = read_suite(suite).rows
    cells = sorted((r.cell["family"], r.cell["band"]) for r in rows)
    assert cells == sorted([("propositional", "easy")] * 2 + [("propositional", "hard")] * 2 +
                           [("zebra", "easy")] * 2 + [("zebra", "intermediate")] * 2)
    for row in rows:
        assert row.answer_form == "solution" and row.answers == {"solved": "solved", "unsolved": "unsolved"}
        assert row.puzzle is not None and reprove(row.puzzle) == []
        assert row.expect == {"solution": row.puzzle["solution"]}
        assert "Give the solution as one line per person" in (row.messages[-1].content or "")


def test_a_planted_solver_scores_exactly_its_bands(suite: Path, tmp_path: Path) -> None:
    rows = read_suite(suite).rows
    by_prompt = {r.messages[-1].content or "": r.puzzle or {} for r in rows}
    _run(suite, tmp_path / "run", Solver(by_prompt, {"hard", "intermediate"}))
    result = CliRunner().invoke(main, ["score", str(tmp_path / "run"), "--out", str(tmp_path / "score")])
    assert result.exit_code == 0 and result.exception is None, result.output
    summary = json.loads((tmp_path / "score" / "summary.json").read_text(encoding="utf-8"))
    solved = {(b["family"], b["band"]): b["accuracy"] for b in summary["bands"]}
    assert solved == {("propositional", "easy"): 0.0, ("propositional", "hard"): 1.0,
                      ("zebra", "easy"): 0.0, ("zebra", "intermediate"): 1.0}
    assert "  openai/stub zebra intermediate: solved 100.0% (2/2; 0 abstained)" in result.output
    report = CliRunner().invoke(main, ["report", str(tmp_path / "score"), "--out", str(tmp_path / "report")])
    assert report.exit_code == 0 and report.exception is None, report.output
    path = tmp_path / "run" / "results.jsonl"  # the SDK's read_results, which this family scores with, refuses a repeat
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    path.write_text("".join([*lines, lines[1]]), encoding="utf-8")
    again = CliRunner().invoke(main, ["score", str(tmp_path / "run"), "--out", str(tmp_path / "again")])
    first = json.loads(lines[1])
    kinds = "failed then failed" if first["error"] else "answered then answered"
    assert again.exit_code == 1 and again.output == repeat_message(path, len(lines) + 1, first["item_id"],
                                                                   first["sample"], 2, kinds)


@pytest.mark.parametrize(("old", "new", "expected"), [
    ("  count 2 per band\n  prompt solve\n  decode temperature 0, max_tokens 60\ndesign rows",
     "  prompt solve\n  decode temperature 0, max_tokens 60\ndesign rows",
     ("puzzle-solving design 'logic' has no 'count' clause", "add: count 10 per band")),
    ("answer solution row", "answer solution rows", ("unknown puzzle 'rows'", "did you mean 'row'?")),
    ("  bands easy <= 1, intermediate > 1\n", "  bands easy <= 1, intermediate > 1\n  clues nextto 1\n",
     ("puzzle 'row': unknown clue type 'nextto' for zebra puzzles",
      "did you mean 'next_to'? zebra clue types: at, not_at, same, not_same, left_of, directly_left, next_to")),
])
def test_mistakes_are_located(tmp_path: Path, old: str, new: str, expected: tuple[str, str]) -> None:
    assert old in TINY
    path = tmp_path / "tiny.spec"
    path.write_text(TINY.replace(old, new, 1), encoding="utf-8")
    with pytest.raises(SpecError) as caught:
        compile_file(path, tmp_path / "out")
    assert [(d.message, d.hint) for d in caught.value.diagnostics] == [expected]


def _renamed(run: Path, model: str) -> Path:
    """The run with its model renamed (a second model's run of the same suite)."""
    for name in ("results.jsonl", "run.json"):
        path = run / name
        path.write_text(path.read_text(encoding="utf-8").replace("openai/stub", model), encoding="utf-8")
    return run


def test_several_models_are_compared_on_every_band(suite: Path, tmp_path: Path) -> None:
    rows = read_suite(suite).rows
    by_prompt = {r.messages[-1].content or "": r.puzzle or {} for r in rows}
    _run(suite, tmp_path / "a", Solver(by_prompt, {"hard", "intermediate"}))
    _run(suite, tmp_path / "b", Solver(by_prompt, {"easy", "hard", "intermediate"}))
    _renamed(tmp_path / "b", "openai/other")
    result = CliRunner().invoke(main, ["score", str(tmp_path / "a"), str(tmp_path / "b"), "-o", str(tmp_path / "s")])
    assert result.exit_code == 0 and result.exception is None, result.output
    summary = json.loads((tmp_path / "s" / "summary.json").read_text(encoding="utf-8"))
    found = {r["statistic"]: r for r in summary["comparisons"]["rows"]}
    assert set(found) == {"exact-match accuracy: propositional easy", "exact-match accuracy: propositional hard",
                          "exact-match accuracy: zebra easy", "exact-match accuracy: zebra intermediate"}
    # solved by b (openai/other, model A) only: every puzzle differs by 1, so there is no spread to test
    easy = found["exact-match accuracy: zebra easy"]
    assert (easy["model_a"], easy["difference"], easy["tied"]) == ("openai/other", 1.0, None)
    assert found["exact-match accuracy: zebra intermediate"]["difference"] == 0.0
    report = CliRunner().invoke(main, ["report", str(tmp_path / "s"), "--out", str(tmp_path / "report")])
    assert report.exit_code == 0 and report.exception is None, report.output
    assert "Paired model comparisons" in (tmp_path / "report" / "report.md").read_text(encoding="utf-8")
    again = CliRunner().invoke(main, ["score", str(tmp_path / "a"), str(tmp_path / "a"), "-o", str(tmp_path / "t")])
    assert again.exit_code != 0 and "answers with openai/stub, as" in again.output, again.output
