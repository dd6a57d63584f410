"""An effects suite's analysis record is checked against reserved names, against itself and against the
suite's rows before anything is scored (issue 32, item 3): each hostile record is a located error, exit 1,
never a traceback and never a score of 0.0."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from spec_audits.cli import main
from spec_audits.contract.reader import read_suite
from spec_audits.contract.results_model import ResultRow, RunInfo
from spec_audits.runner.results_io import write_results, write_run_info
from tests.families.effects import SPEC, write_tiny
from tests.support import refused_repeats

FIX = "; recompile the suite from its spec or get it from its author\n"
COLUMNS = "scenario, condition, y, _y, count, sum, y_OUTCOME"
Edit = Callable[[dict[str, Any]], None]


@pytest.fixture(scope="session")
def compiled(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("tiny")
    result = CliRunner().invoke(main, ["compile", str(write_tiny(folder)), "-o", str(folder / "suite")])
    assert result.exit_code == 0, result.output
    return folder / "suite"


def _run(compiled: Path, tmp_path: Path, edit: Edit) -> tuple[Path, Path]:
    """A copy of the tiny suite whose manifest.analysis `edit` changed, and a run of every row answered yes or
    no in turn; run.json hashes the edited manifest, as a stranger's run does. (run, suite folder)"""
    suite = tmp_path / "suite"
    suite.mkdir()
    (suite / "suite.jsonl").write_bytes((compiled / "suite.jsonl").read_bytes())
    manifest = json.loads((compiled / "manifest.json").read_text())
    edit(manifest["analysis"])
    (suite / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    loaded = read_suite(suite)
    rows = [ResultRow(item_id=row.id, sample=0, model="m", params={}, response=answer, answer=answer,
                      outcome=row.answers.get(answer, answer))
            for index, row in enumerate(loaded.rows) for answer in ["yes" if index % 2 else "no"]]
    run = tmp_path / "run"
    run.mkdir()
    write_results(run / "results.jsonl", rows)
    write_run_info(run, RunInfo(suite_dir=str(suite), suite_manifest_sha256=loaded.manifest_sha256,
                                suite_sha256=loaded.sha256, model="m", mode="sample", settings={}, started="t",
                                planned=len(rows), done=len(rows), failed=0))
    return run, suite


def _factor(index: int, **changes: Any) -> Edit:
    def edit(analysis: dict[str, Any]) -> None:
        analysis["factors"][index].update(changes)
        if "name" in changes:
            analysis["crossing"]["factors"][index] = changes["name"]
    return edit


def _twice(analysis: dict[str, Any]) -> None:
    analysis["factors"].insert(1, analysis["factors"][0])
    analysis["crossing"]["factors"].insert(1, "age")


def _extra_factor(analysis: dict[str, Any]) -> None:
    analysis["factors"].append({"name": "income", "levels": ["low", "high"], "reference": "low"})
    analysis["crossing"]["factors"].append("income")


RECORD = [
    ("factor_named_scenario", _factor(0, name="scenario"),
     f"analysis.factors.0: factor 'scenario' has the name of a column the scorer keeps ({COLUMNS})"),
    ("factor_named_condition", _factor(1, name="condition"),
     f"analysis.factors.1: factor 'condition' has the name of a column the scorer keeps ({COLUMNS})"),
    ("factor_named_y_correct", _factor(0, name="y_correct"),
     f"analysis.factors.0: factor 'y_correct' has the name of a column the scorer keeps ({COLUMNS})"),
    ("level_listed_twice", _factor(0, levels=["young", "middle", "young"]),
     "analysis.factors.0: level 'young' of factor 'age' is listed twice"),
    ("factor_listed_twice", _twice, "analysis: factor 'age' is listed twice"),
    ("condition_listed_twice", lambda a: a["conditions"].append("fair"), "analysis: condition 'fair' is listed twice"),
    ("interaction_with_itself", lambda a: a["interactions"].append(["age", "age"]),
     "analysis: an interaction pairs a factor with itself"),
    ("scale_of_words", lambda a: a["answer"].update(kind="scale"),
     "analysis.answer: a scale answer's tokens are whole numbers, not ['yes', 'no']"),
    ("yesno_of_other_tokens", lambda a: a["answer"].update(tokens=["no", "yes"]),
     "analysis.answer: a yesno answer's tokens are yes and no, not ['no', 'yes']"),
    ("answer_and_per_design_answers", lambda a: a.update(designs={"x": {"answer": a["answer"]},
                                                                  "y": {"answer": a["answer"]}}),
     "analysis: the record has an answer, or per design its answer under designs: exactly one"),
    ("per_design_answers_of_one_design", lambda a: a.update(designs={"x": {"answer": a.pop("answer")}}),
     "analysis: per-design answers are for a suite of several designs"),
]


@pytest.mark.parametrize(("edit", "problem"), [(e, p) for _, e, p in RECORD], ids=[c for c, _, _ in RECORD])
def test_a_record_that_contradicts_itself_or_takes_a_scorer_column_is_refused(
        compiled: Path, tmp_path: Path, edit: Edit, problem: str) -> None:
    run, suite = _run(compiled, tmp_path, edit)
    result = CliRunner().invoke(main, ["score", str(run)])
    assert result.exit_code == 1 and isinstance(result.exception, SystemExit), result.output
    assert result.output == f"Error: {suite / 'manifest.json'}: {problem}{FIX}"
    assert not (run / "score").exists()


ROWS = [
    ("factor_with_no_cell_key", _extra_factor,
     "its cell has no key 'income', which manifest.json's analysis lists"),
    ("level_the_rows_lack", _factor(1, levels=["man", "person"], texts={"man": "man", "person": "person"}),
     "gender 'woman' is not one of manifest.json's analysis (man, person)"),
    ("options_the_rows_do_not_answer", lambda a: a["answer"].update(kind="options", tokens=["a", "b"]),
     "its answers ['no', 'yes'] are not the analysis's tokens ['a', 'b']"),
    ("correct_flag_the_rows_lack", lambda a: a.update(correct=True),
     "its answers mean {'no': 'no', 'yes': 'yes'}, but manifest.json's analysis says one token is correct and "
     "the others incorrect"),
    ("per_design_answers_the_rows_do_not_name", lambda a: a.update(designs={"x": {"answer": a["answer"]},
                                                                           "y": {"answer": a.pop("answer")}}),
     "its cell names no design, but manifest.json's analysis gives answers to x, y"),
]


@pytest.mark.parametrize(("edit", "problem"), [(e, p) for _, e, p in ROWS], ids=[c for c, _, _ in ROWS])
def test_a_record_the_rows_contradict_is_a_located_error_before_scoring(
        compiled: Path, tmp_path: Path, edit: Edit, problem: str) -> None:
    run, suite = _run(compiled, tmp_path, edit)
    rows = read_suite(suite).rows
    line, row = next((number, row) for number, row in enumerate(rows, start=1)
                     if problem.startswith("its") or row.cell["gender"] == "woman")
    result = CliRunner().invoke(main, ["score", str(run)])
    assert result.exit_code == 1 and isinstance(result.exception, SystemExit), result.output
    assert result.output == f"Error: {suite / 'suite.jsonl'}:{line}: row {row.id}: {problem}{FIX}"
    assert not (run / "score").exists()


def test_the_unedited_record_scores(compiled: Path, tmp_path: Path) -> None:
    run, _ = _run(compiled, tmp_path, lambda analysis: None)
    result = CliRunner().invoke(main, ["score", str(run)])
    assert result.exit_code == 0 and result.exception is None, result.output
    summary = json.loads((run / "score" / "summary.json").read_text())
    assert summary["models"]["m"]["answered"] == len(read_suite(compiled).rows)


def test_a_factor_named_after_a_scorer_column_does_not_compile(tmp_path: Path) -> None:
    spec = write_tiny(tmp_path, SPEC.replace("factor gender:", "factor count:").replace("gender", "count"))
    result = CliRunner().invoke(main, ["compile", str(spec), "-o", str(tmp_path / "suite")])
    assert result.exit_code == 1 and isinstance(result.exception, SystemExit), result.output
    assert f"factor 'count' has the name of a column the scorer keeps ({COLUMNS})" in result.output
    assert not (tmp_path / "suite").exists()


def _edit_results(run: Path, edit: Callable[[list[dict[str, Any]]], None]) -> None:
    rows = [json.loads(line) for line in (run / "results.jsonl").read_text().splitlines()]
    edit(rows)
    (run / "results.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")


RESULTS = [
    ("item_the_suite_lacks", lambda rows: rows[2].update(item_id="nope"), "column 'item_id': item_id 'nope' is not "
     "in the suite"),
    ("another_model", lambda rows: rows[3].update(model="other"), "column 'model': answered by 'other', but run.json "
     "says the run is of 'm'"),
    ("outcome_against_answer", lambda rows: rows[1].update(outcome="yes" if rows[1]["answer"] == "no" else "no"),
     "column 'outcome': outcome '{outcome}' contradicts answer '{answer}', which means '{answer}'"),
    ("sample_the_row_does_not_draw", lambda rows: rows[4].update(sample=2**62), "column 'sample': sample index "
     "outside the item's samples"),
]


@pytest.mark.parametrize(("edit", "problem"), [(e, p) for _, e, p in RESULTS], ids=[c for c, _, _ in RESULTS])
def test_a_result_row_no_run_of_the_suite_wrote_is_a_located_error(
        compiled: Path, tmp_path: Path, edit: Callable[[list[dict[str, Any]]], None], problem: str) -> None:
    """The results are streamed in columns (score/read.py): the row's line is still named."""
    run, _ = _run(compiled, tmp_path, lambda analysis: None)
    _edit_results(run, edit)
    rows = [json.loads(line) for line in (run / "results.jsonl").read_text().splitlines()]
    line = next(n for n, row in enumerate(rows, start=1) if row["item_id"] == "nope" or row["model"] == "other"
                or row["outcome"] != row["answer"] or row["sample"] != 0)
    result = CliRunner().invoke(main, ["score", str(run)])
    assert result.exit_code == 1 and isinstance(result.exception, SystemExit), result.output
    detail = problem.format(**rows[line - 1])
    assert result.output == f"Error: {run / 'results.jsonl'}, row {line}, {detail}\n"
    assert not (run / "score").exists()


def test_a_repeated_item_and_sample_is_refused_and_merge_keeps_the_answer(compiled: Path, tmp_path: Path) -> None:
    """A failure then its answer, or an answer twice, is refused at the second row, naming the first (effects counts
    no answer twice); `spec merge` (the fix the message names) keeps the answer and scores as the run that answered
    once."""
    run, _ = _run(compiled, tmp_path, lambda analysis: None)
    retried = refused_repeats(run, tmp_path / "repeats", 2)
    merged = CliRunner().invoke(main, ["merge", str(retried), "--out", str(tmp_path / "merged")])
    assert merged.exit_code == 0 and merged.exception is None, merged.output
    for folder in (run, tmp_path / "merged"):
        result = CliRunner().invoke(main, ["score", str(folder)])
        assert result.exit_code == 0 and result.exception is None, result.output
    for name in ("summary.json", "contrasts.csv"):
        assert (run / "score" / name).read_bytes() == (tmp_path / "merged" / "score" / name).read_bytes(), name
