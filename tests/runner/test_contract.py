"""The file contract: every command reports a bad suite or run file as file:line, what is wrong and what to do."""

from __future__ import annotations

import gc
import hashlib
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner

from spec_audits.cli import main
from spec_audits.contract.reader import (
    CHANGED_SUITE,
    DAMAGED_RESULTS,
    DAMAGED_RUN,
    RECOMPILE,
    ContractError,
    read_results,
    read_run,
    read_suite,
)
from spec_audits.contract.results_model import ResultRow, RunInfo
from spec_audits.runner.results_io import ResultsWriter, write_run_info

BAD_LINE = '{"id": "x",}'
BAD_LINE_PROBLEM = "Invalid JSON: trailing comma at column 12"


def fails(*args: str | Path) -> str:
    """Run `spec ARGS`, which must stop with a usage error (exit 1, no exception but SystemExit)."""
    result = CliRunner().invoke(main, [str(a) for a in args])
    assert result.exit_code == 1, result.output
    assert isinstance(result.exception, SystemExit), result.exception
    return result.output


def _sha(suite: Path) -> str:
    return hashlib.sha256((suite / "manifest.json").read_bytes()).hexdigest()


def _break_line(path: Path, number: int, text: str = BAD_LINE) -> None:
    lines = path.read_text().splitlines()
    lines[number - 1] = text
    path.write_text("\n".join(lines) + "\n")


def _run_folder(run_dir: Path, suite: Path, *, sha: str | None = None, answers: int = 3) -> Path:
    """A run folder of `suite` by openai/stub in sample mode, with `answers` answered rows."""
    run_dir.mkdir(parents=True)
    info = RunInfo(
        suite_dir=str(suite), suite_manifest_sha256=sha or _sha(suite), model="openai/stub", mode="sample",
        settings={"mode": "sample"}, started="2026-01-01T00:00:00+00:00", planned=answers, done=answers, failed=0,
    )
    write_run_info(run_dir, info)
    rows = read_suite(suite).rows
    writer = ResultsWriter(run_dir / "results.jsonl")
    for row in rows[:answers]:
        writer.append(ResultRow(item_id=row.id, sample=0, model="openai/stub", params={}, answer="A", outcome="tea"))
    writer.close()
    return run_dir


@pytest.fixture
def suite(make_suite: Callable[..., Path]) -> Path:
    return make_suite(n=4, samples=1)


@pytest.mark.parametrize("command", ["run", "show", "verify"])
def test_a_bad_suite_line_is_located_for_every_command(suite: Path, tmp_path: Path, command: str) -> None:
    _break_line(suite / "suite.jsonl", 2)
    extra = ["--out", tmp_path / "r", "--no-progress"] if command == "run" else []
    expected = f"Error: {suite / 'suite.jsonl'}:2: {BAD_LINE_PROBLEM}; {RECOMPILE}\n"
    assert fails(command, suite, *extra) == expected
    assert not (tmp_path / "r").exists()


def test_verify_locates_a_bad_line_of_a_suite_jsonl_given_alone(suite: Path) -> None:
    _break_line(suite / "suite.jsonl", 3, "[1]")
    expected = f"Error: {suite / 'suite.jsonl'}:3: Input should be an object; {RECOMPILE}\n"
    assert fails("verify", suite / "suite.jsonl") == expected


def test_a_bad_manifest_is_named_by_show(suite: Path) -> None:
    (suite / "manifest.json").write_text('{"suite": "s"}')
    expected = f"Error: {suite / 'manifest.json'}: spec_file: Field required (and 8 more); {RECOMPILE}\n"
    assert fails("show", suite) == expected


def test_a_corrupt_run_json_under_run_out_is_located(suite: Path, tmp_path: Path) -> None:
    out = tmp_path / "r"
    out.mkdir()
    (out / "run.json").write_text('{"suite_dir": "s"')
    problem = "Invalid JSON: EOF while parsing an object at line 1 column 17"
    expected = f"Error: {out / 'run.json'}: {problem}; {DAMAGED_RUN}\n"
    assert fails("run", suite, "--out", out, "--model", "openai/stub", "--no-progress") == expected


def test_a_run_of_a_changed_suite_is_refused_with_both_hashes(suite: Path, tmp_path: Path) -> None:
    out = _run_folder(tmp_path / "r", suite, sha="0" * 64)
    before = (out / "results.jsonl").read_bytes()
    expected = (
        f"Error: {out / 'run.json'}: the run was made on a suite whose manifest.json has sha256 {'0' * 64}, "
        f"but {suite / 'manifest.json'} has sha256 {_sha(suite)}; {CHANGED_SUITE}\n"
    )
    assert fails("run", suite, "--out", out, "--model", "openai/stub", "--no-progress") == expected
    assert (out / "results.jsonl").read_bytes() == before


def test_a_bad_middle_results_line_stops_resume_and_leaves_the_file(suite: Path, tmp_path: Path) -> None:
    out = _run_folder(tmp_path / "r", suite)
    _break_line(out / "results.jsonl", 2)
    before = (out / "results.jsonl").read_bytes()
    expected = f"Error: {out / 'results.jsonl'}:2: {BAD_LINE_PROBLEM}; {DAMAGED_RESULTS}\n"
    assert fails("run", suite, "--out", out, "--model", "openai/stub", "--no-progress") == expected
    assert (out / "results.jsonl").read_bytes() == before


def test_a_corrupt_run_json_stops_merge(suite: Path, tmp_path: Path) -> None:
    one, two = _run_folder(tmp_path / "one", suite), _run_folder(tmp_path / "two", suite)
    (two / "run.json").write_text("[]")
    expected = f"Error: {two / 'run.json'}: Input should be an object; {DAMAGED_RUN}\n"
    assert fails("merge", one, two, "--out", tmp_path / "merged") == expected
    assert not (tmp_path / "merged").exists()


def test_a_folder_without_run_json_stops_merge(suite: Path, tmp_path: Path) -> None:
    one = _run_folder(tmp_path / "one", suite)
    (tmp_path / "empty").mkdir()
    expected = (
        f"Error: {tmp_path / 'empty' / 'run.json'}: missing; is {tmp_path / 'empty'} a run folder? "
        "(spec run writes one)\n"
    )
    assert fails("merge", one, tmp_path / "empty", "--out", tmp_path / "merged") == expected


def test_a_bad_middle_results_line_stops_merge(suite: Path, tmp_path: Path) -> None:
    one, two = _run_folder(tmp_path / "one", suite), _run_folder(tmp_path / "two", suite)
    _break_line(two / "results.jsonl", 2)
    expected = f"Error: {two / 'results.jsonl'}:2: {BAD_LINE_PROBLEM}; {DAMAGED_RESULTS}\n"
    assert fails("merge", one, two, "--out", tmp_path / "merged") == expected
    assert not (tmp_path / "merged" / "results.jsonl").exists()


def test_a_torn_last_results_line_is_left_out(suite: Path, tmp_path: Path) -> None:
    out = _run_folder(tmp_path / "r", suite)
    whole = (out / "results.jsonl").read_bytes()
    (out / "results.jsonl").write_bytes(whole + whole[:30])
    assert len(read_results(out / "results.jsonl")) == 3


def test_read_run_gives_the_run_and_its_suite(suite: Path, tmp_path: Path) -> None:
    info, found = read_run(_run_folder(tmp_path / "r", suite))
    assert (info.model, found.path, found.manifest_sha256) == ("openai/stub", suite, _sha(suite))


def test_read_run_refuses_a_changed_suite(suite: Path, tmp_path: Path) -> None:
    run_dir = _run_folder(tmp_path / "r", suite)
    (suite / "manifest.json").write_text((suite / "manifest.json").read_text().replace('"seed": 0', '"seed": 1'))
    with pytest.raises(ContractError) as caught:
        read_run(run_dir)
    assert (caught.value.path, caught.value.line, caught.value.fix) == (run_dir / "run.json", None, CHANGED_SUITE)
    assert _sha(suite) in caught.value.problem


def test_read_run_names_a_missing_suite_folder(suite: Path, tmp_path: Path) -> None:
    run_dir = _run_folder(tmp_path / "r", suite)
    suite.rename(tmp_path / "moved")
    with pytest.raises(ContractError, match=f"suite_dir: suite folder '{suite}' not found"):
        read_run(run_dir)



@pytest.mark.parametrize("enabled", [True, False])
def test_the_collector_is_paused_while_rows_are_read_and_left_as_it_was(enabled: bool, tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    from spec_audits.contract import reader as contract

    path = tmp_path / "results.jsonl"
    writer = ResultsWriter(path)
    for sample in (0, 1):
        writer.append(ResultRow(item_id="a", sample=sample, model="m", params={}))
    writer.close()
    seen: list[bool] = []
    validate = contract._validate
    monkeypatch.setattr(contract, "_validate", lambda *args: seen.append(gc.isenabled()) or validate(*args))
    (gc.enable if enabled else gc.disable)()
    try:
        assert [row.sample for row in read_results(path)] == [0, 1]
        assert (seen, gc.isenabled()) == ([False, False], enabled)
        path.write_text(path.read_text() + BAD_LINE + "\n" + path.read_text().splitlines()[0] + "\n")
        with pytest.raises(ContractError):
            read_results(path)
        assert gc.isenabled() == enabled
    finally:
        gc.enable()
