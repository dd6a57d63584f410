"""The embedded model's run-time options: threads (default, $SPEC_LOCAL_THREADS, `?threads=N`), quiet
llama.cpp logs, and progress written as whole lines when stderr is not a terminal."""

from __future__ import annotations

import io
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner

from spec_audits.contract.reader import read_results
from spec_audits.local.model import busy_cores, default_threads, split_options, threads_for
from spec_audits.runner.commands.run_cli import run
from spec_audits.runner.progress import LineProgress, progress
from spec_audits.runner.services.provider_errors import FatalError


@pytest.mark.parametrize(("cores", "busy", "threads"), [(2, 0.0, 2), (2, 0.4, 2), (2, 1.0, 1), (2, 2.0, 1),
                                                         (1, 0.0, 1), (16, 3.4, 13)])
def test_default_threads_leave_the_cores_others_hold(cores: int, busy: float, threads: int) -> None:
    assert default_threads(cores, busy) == threads


def test_busy_cores_sees_a_spinning_process() -> None:
    spinner = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        assert busy_cores(0.5) >= 0.7
    finally:
        spinner.kill()


def test_threads_come_from_the_model_name_then_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    assert split_options("gemma-3-270m?threads=3") == ("gemma-3-270m", {"threads": "3"})
    assert threads_for({"threads": "3"}) == 3
    monkeypatch.setenv("SPEC_LOCAL_THREADS", "5")
    assert threads_for({}) == 5 and threads_for({"threads": "2"}) == 2


def test_bad_local_options_stop_with_a_message() -> None:
    with pytest.raises(FatalError, match=r"^local model 'gemma-3-270m\?thread=2': unknown option 'thread' "
                                         r"\(the one option is threads=N\)$"):
        split_options("gemma-3-270m?thread=2")
    with pytest.raises(FatalError, match=r"^local model threads must be a whole number of at least 1, not '0'$"):
        threads_for({"threads": "0"})


def test_a_run_with_bad_threads_exits_3_with_the_message(make_suite: Callable[..., Path], tmp_path: Path) -> None:
    suite = make_suite(n=2, samples=1)
    result = CliRunner().invoke(run, [str(suite), "--model", "local/gemma-3-270m?threads=x", "--no-progress",
                                      "--out", str(tmp_path / "r")])
    assert result.exit_code == 3 and isinstance(result.exception, SystemExit)  # the model cannot be called as named
    assert "Error: run stopped: local model threads must be a whole number of at least 1, not 'x'" in result.output


def test_threads_do_not_change_the_cache_identity(make_suite: Callable[..., Path], tmp_path: Path) -> None:
    suite = make_suite(n=4, samples=1)
    first = CliRunner().invoke(run, [str(suite), "--no-progress", "--out", str(tmp_path / "a")])
    second = CliRunner().invoke(run, [str(suite), "--model", "local/gemma-3-270m?threads=1", "--no-progress",
                                      "--out", str(tmp_path / "b")])
    assert first.exit_code == 0 and second.exit_code == 0, second.output
    assert "0 calls, 4 cache hits" in second.output
    answers = [{r.item_id: r.answer for r in read_results(tmp_path / d / "results.jsonl")} for d in "ab"]
    assert answers[0] == answers[1]


def test_line_progress_prints_a_line_per_tenth_and_no_carriage_returns() -> None:
    out = io.StringIO()
    bar = LineProgress(total=600, initial=0, unit="answers", file=out)
    for _ in range(600):
        bar.set_postfix(hits=0, failed=0)
        bar.update()
    bar.close()
    lines = out.getvalue().splitlines()
    assert len(lines) == 11 and "\r" not in out.getvalue()
    assert [line.split(" answers")[0] for line in lines] == ["1/600"] + [f"{60 * k}/600" for k in range(1, 11)]
    assert lines[-1].endswith(", hits 0, failed 0")


def test_progress_is_a_bar_only_on_a_terminal() -> None:
    assert isinstance(progress(10, 0, True, file=io.StringIO()), LineProgress)
    assert not isinstance(progress(10, 0, False, file=io.StringIO()), LineProgress)


def test_a_run_logs_whole_progress_lines_and_no_llama_chatter(make_suite: Callable[..., Path], tmp_path: Path) -> None:
    suite = make_suite(n=20, samples=1)
    result = CliRunner().invoke(run, [str(suite), "--out", str(tmp_path / "p")])
    assert result.exit_code == 0 and result.exception is None, result.output
    progress_lines = [line for line in result.stderr.splitlines() if " answers (" in line]
    assert 1 <= len(progress_lines) <= 11 and "\r" not in result.stderr
    assert progress_lines[-1].startswith("20/20 answers (100%)")
    assert "llama_" not in result.stderr
