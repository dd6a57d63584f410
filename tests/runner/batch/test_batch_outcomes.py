"""What a batch gives back besides answers: a request the provider refused, an expired or cancelled batch,
errors of the batch API itself; each failure kept on its item and retried on request, in a new batch or
live."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from spec_audits.base import exits
from spec_audits.contract.reader import read_results
from spec_audits.contract.writer import suite_row
from spec_audits.runner.batch.ledger import read_ledger
from spec_audits.runner.commands.run_cli import run as run_command
from spec_audits.runner.run_config import RunError
from spec_audits.runner.services.provider_errors import FatalError
from tests.runner.batch.support import run
from tests.stub_server import StubServer
from tests.support import ROOT, forced_choice_rows, write_suite


def _suite(tmp_path: Path, n: int = 8, too_long: int = 0) -> Path:
    rows = forced_choice_rows(n, 1)
    for index in range(too_long):  # the stub refuses these with 400, context length exceeded
        body = rows[index].model_dump(exclude_none=True, exclude={"id"})
        body["messages"][-1]["content"] += " TOO_LONG"
        rows[index] = suite_row(body)
    return write_suite(tmp_path / "suite", rows)


def _errors(out: Path) -> list[str | None]:
    return sorted((row.error or "" for row in read_results(out / "results.jsonl")), reverse=True)


def test_a_refused_request_fails_its_item_alone(tmp_path: Path, stub: StubServer) -> None:
    summary = run(_suite(tmp_path, too_long=2), tmp_path / "run", stub)
    assert (summary.done, summary.failed) == (6, 2)
    assert _errors(tmp_path / "run")[:2] == [
        "batch request failed (HTTP 400): context_length_exceeded: This model's maximum context length is 8 tokens"
    ] * 2


def test_an_expired_batch_fails_what_it_did_not_run_and_retry_failed_sends_it_again(
    tmp_path: Path, stub: StubServer
) -> None:
    suite, out = _suite(tmp_path), tmp_path / "run"
    stub.batches.config.expire_after = 3
    expired = run(suite, out, stub)
    assert (expired.done, expired.failed) == (3, 5)
    assert set(_errors(out)) == {"", "batch request failed: batch_expired: This request was not run: the batch is "
                                     "expired."}
    kept = run(suite, out, stub)  # failures are kept until asked for
    assert (kept.resumed, kept.calls, stub.batches.calls["create"]) == (8, 0, 1)
    stub.batches.config.expire_after = None
    again = run(suite, out, stub, retry_failed=True)
    assert (again.done, again.failed, again.calls, stub.batches.calls["create"]) == (8, 0, 5, 2)
    assert [part.requests for part in read_ledger(out).parts] == [8, 5]


def test_failed_batch_requests_can_be_retried_live(tmp_path: Path, stub: StubServer) -> None:
    suite, out = _suite(tmp_path), tmp_path / "run"
    stub.batches.config.expire_after = 6
    run(suite, out, stub)
    live = run(suite, out, stub, batch=False, retry_failed=True)
    assert (live.done, live.failed, live.calls, stub.stats.requests) == (8, 0, 2, 2)


def test_a_live_run_is_refused_while_batches_are_open(tmp_path: Path, stub: StubServer) -> None:
    suite, out = _suite(tmp_path), tmp_path / "run"
    stub.batches.hold = True
    process = _spawn(suite, out, stub)
    _wait_for(lambda: any(part.batch_id for part in read_ledger(out).parts))
    process.send_signal(signal.SIGKILL)
    process.wait(timeout=30)
    with pytest.raises(RunError, match=r"has 1 batch\(es\) not collected yet: resume it with --batch"):
        run(suite, out, stub, batch=False)
    assert stub.stats.requests == 0


def test_status_shows_and_cancel_stops_the_open_batches(tmp_path: Path, stub: StubServer) -> None:
    suite, out = _suite(tmp_path), tmp_path / "run"
    stub.batches.hold = True
    process = _spawn(suite, out, stub, "--batch-size", "5")
    _wait_for(lambda: sum(part.batch_id is not None for part in read_ledger(out).parts) == 2)
    process.send_signal(signal.SIGKILL)
    process.wait(timeout=30)
    command = [str(suite), "--out", str(out), "--model", "openai/stub", "--api-base", f"{_base(stub)}"]
    status = CliRunner().invoke(run_command, [*command, "--status"])
    assert status.exit_code == 0 and status.exception is None, status.output
    assert status.output.splitlines() == [
        f"{out}: 2 batches in 1 round, 0 collected",
        "  r001-p0001 (batch_1, openai/stub): in_progress, 0 of 5 done, 0 failed",
        "  r001-p0002 (batch_2, openai/stub): in_progress, 0 of 3 done, 0 failed",
    ]
    cancel = CliRunner().invoke(run_command, [*command, "--cancel"])
    assert cancel.exit_code == 0 and cancel.exception is None, cancel.output
    assert cancel.output.splitlines()[0] == (
        "cancelled r001-p0001 (batch_1, openai/stub): cancelling, 0 of 5 done, 0 failed")
    collected = run(suite, out, stub, batch_size=5)  # half of each cancelled batch had run
    assert (collected.done, collected.failed, stub.batches.calls["create"]) == (2 + 1, 3 + 2, 2)
    assert "batch request failed: batch_cancelled: This request was not run: the batch is cancelled." in _errors(out)


def test_a_batch_api_error_stops_the_run_and_a_transient_one_is_retried(tmp_path: Path, stub: StubServer) -> None:
    suite, out = _suite(tmp_path), tmp_path / "run"
    stub.batches.config.fail_status = {"upload": 401}
    with pytest.raises(FatalError, match=r"^openai/stub: batch upload failed: AuthenticationError"):
        run(suite, out, stub)
    assert (stub.batches.calls["upload"], stub.batches.calls["create"]) == (1, 0)
    stub.batches.config.fail_status = {"retrieve": 500}
    with pytest.raises(FatalError, match=r"^openai/stub: batch status failed: InternalServerError"):
        run(suite, out, stub, max_retries=2)
    assert (stub.batches.calls["retrieve"], stub.batches.calls["create"]) == (3, 1)
    stub.batches.config.fail_status = {}
    resumed = run(suite, out, stub)
    assert (resumed.done, stub.batches.calls["upload"], stub.batches.calls["create"]) == (8, 2, 1)


def test_a_part_not_uploaded_is_written_again_from_the_suite(tmp_path: Path, stub: StubServer) -> None:
    """A part the ledger records as written was never sent: a resumed run derives its requests again (no file
    in the run folder is uploaded) and records the part anew."""
    suite, out = _suite(tmp_path), tmp_path / "run"
    stub.batches.config.fail_status = {"upload": 429}
    with pytest.raises(FatalError, match=r"^openai/stub: batch upload failed: RateLimitError"):
        run(suite, out, stub, max_retries=1)
    assert [part.status for part in read_ledger(out).parts] == ["written"]
    assert sorted(path.name for path in (out / "batches").iterdir()) == ["ledger.json", "r001-p0001.keys"]
    stub.batches.config.fail_status = {}
    resumed = run(suite, out, stub)
    assert (resumed.done, stub.batches.calls["upload"], stub.batches.calls["create"]) == (8, 3, 1)
    assert [(part.name, part.requests, part.collected) for part in read_ledger(out).parts] == [("r001-p0001", 8, True)]


def test_spec_run_batch_exits_as_a_live_run_does(tmp_path: Path, stub: StubServer) -> None:
    suite, out = _suite(tmp_path), tmp_path / "run"
    command = [str(suite), "--out", str(out), "--model", "openai/stub", "--api-base", _base(stub), "--batch",
               "--poll", "0.01", "--no-progress"]
    stub.batches.config.fail_status = {"create": 401}
    stopped = CliRunner().invoke(run_command, command)
    assert (stopped.exit_code, type(stopped.exception)) == (exits.STOPPED, SystemExit)
    assert "run stopped: openai/stub: batch create failed: AuthenticationError" in stopped.output
    stub.batches.config.fail_status, stub.batches.config.expire_after = {}, 5
    partial = CliRunner().invoke(run_command, command)
    assert (partial.exit_code, type(partial.exception)) == (exits.PARTIAL, SystemExit)
    assert f"{out}: 5 answered, 3 failed of 8 (sample mode); 8 calls, 0 cache hits" in partial.output


def _base(stub: StubServer) -> str:
    return f"http://127.0.0.1:{stub.port}/v1"


def _spawn(suite: Path, out: Path, stub: StubServer, *extra: str) -> subprocess.Popen[bytes]:
    command = [sys.executable, "-c", "from spec_audits.runner.commands.run_cli import run; run()",
               str(suite), "--out", str(out),
               "--model", "openai/stub", "--api-base", _base(stub), "--batch", "--poll", "0.05", "--no-progress",
               *extra]
    return subprocess.Popen(command, env={**os.environ, "PYTHONPATH": str(ROOT)}, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)


def _wait_for(condition: object) -> None:
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            if condition():  # type: ignore[operator]
                return
        except Exception:  # noqa: BLE001,S110 - the ledger may not exist yet
            pass
        time.sleep(0.02)
    raise AssertionError("the batch run did not get there in 120 s")
