"""A batch run killed between submission and completion resumes by polling the batches it recorded: no
batch is submitted twice (the stub counts its creates), not even when the kill fell between a create and
its record; and the results score exactly as a live run of the same answers does."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from spec_audits.contract.reader import read_results
from spec_audits.runner.batch.ledger import read_ledger, write_ledger
from spec_audits.runner.dispatch.score_cli import score
from tests.runner.batch.support import run
from tests.stub_server import StubServer
from tests.support import ROOT, shipped_suite

ROWS, PER_BATCH = 2000, 500
SETTINGS: dict[str, object] = {"limit": ROWS, "mode": "logprob", "batch_size": PER_BATCH}


def _spawn(suite: Path, out: Path, stub: StubServer, settings: dict[str, object]) -> subprocess.Popen[bytes]:
    command = [sys.executable, "-c", "from spec_audits.runner.commands.run_cli import run; run()",
               str(suite), "--out", str(out),
               "--model", "openai/stub", "--api-base", f"http://127.0.0.1:{stub.port}/v1", "--batch", "--poll", "0.05",
               "--limit", str(settings["limit"]), "--mode", str(settings["mode"]),
               "--batch-size", str(settings["batch_size"]), "--no-progress"]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def _kill_once_submitted(process: subprocess.Popen[bytes], out: Path, parts: int) -> None:
    """SIGKILL as soon as the ledger records `parts` submitted batches (the stub holds them in progress)."""
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and process.poll() is None:
        try:
            submitted = [part for part in read_ledger(out).parts if part.batch_id is not None]
        except Exception:  # noqa: BLE001 - the ledger may be mid-replace; look again
            submitted = []
        if len(submitted) == parts:
            break
        time.sleep(0.02)
    process.send_signal(signal.SIGKILL)
    _, err = process.communicate(timeout=30)
    assert process.returncode == -signal.SIGKILL, err.decode()


def _score(run_dir: Path, out: Path) -> dict[str, bytes]:
    result = CliRunner().invoke(score, [str(run_dir), "-o", str(out)])
    assert result.exit_code == 0 and result.exception is None, result.output
    return {path.relative_to(out).as_posix(): path.read_bytes() for path in sorted(out.rglob("*")) if path.is_file()}


@pytest.mark.slow
def test_a_killed_batch_run_resumes_without_a_second_submission_and_scores_as_live(
    tmp_path: Path, stub: StubServer
) -> None:
    suite = shipped_suite("triage")
    out = tmp_path / "batch"
    stub.batches.hold = True
    _kill_once_submitted(_spawn(suite, out, stub, SETTINGS), out, ROWS // PER_BATCH)
    assert stub.batches.calls["create"] == ROWS // PER_BATCH
    assert not (out / "results.jsonl").exists() or not (out / "results.jsonl").read_bytes()
    stub.batches.hold = False
    resumed = run(suite, out, stub, **SETTINGS)
    assert (resumed.done, resumed.failed, resumed.calls) == (ROWS, 0, 0)
    assert stub.batches.calls["create"] == ROWS // PER_BATCH and stub.stats.requests == 0
    live = run(suite, tmp_path / "live", stub, batch=False, cache_path=tmp_path / "live.sqlite", **SETTINGS)
    assert (live.done, live.failed) == (ROWS, 0) and stub.stats.requests == ROWS
    scored_batch = _score(out, tmp_path / "score-batch")
    scored_live = _score(tmp_path / "live", tmp_path / "score-live")
    assert scored_batch.keys() == scored_live.keys() and "summary.json" in scored_batch
    assert scored_batch == scored_live
    assert all(row.logprobs is not None and not row.cached for row in read_results(out / "results.jsonl"))


def test_a_create_whose_record_was_lost_is_found_not_made_again(tmp_path: Path, stub: StubServer) -> None:
    """The one moment a kill can fall between the provider making a batch and the ledger naming it."""
    suite = shipped_suite("triage")
    stub.batches.hold = True
    out = tmp_path / "run"
    settings = {"limit": 40, "mode": "logprob", "batch_size": 10}
    _kill_once_submitted(_spawn(suite, out, stub, settings), out, 4)
    ledger = read_ledger(out)
    lost = ledger.parts[2]
    lost.batch_id, lost.status = None, "uploaded"  # as if killed before the create's reply was recorded
    write_ledger(out, ledger)
    stub.batches.hold = False
    resumed = run(suite, out, stub, **settings)
    assert (resumed.done, stub.batches.calls["create"], stub.batches.calls["upload"]) == (40, 4, 4)
    assert [part.batch_id for part in read_ledger(out).parts] == ["batch_1", "batch_2", "batch_3", "batch_4"]
    assert json.loads((out / "run.json").read_text())["done"] == 40

