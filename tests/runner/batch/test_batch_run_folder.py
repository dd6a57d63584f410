"""A run folder's batch records are a stranger's data: a planted part is never uploaded or submitted, its
answers never enter the cache under the run's keys, a planted private cache never answers a --no-cache run,
and a ledger cannot send a call to a model the run does not make. Every hostile input is made here."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from click.testing import CliRunner

from spec_audits import exits
from spec_audits.contract.reader import read_results
from spec_audits.runner.batch.collect import TWICE
from spec_audits.runner.batch.ledger import read_ledger
from spec_audits.runner.batch.parts import Part, update
from spec_audits.runner.cache import ResponseCache
from spec_audits.runner.provider_errors import FatalError
from spec_audits.runner.run_cli import run as run_command
from spec_audits.runner.run_config import RunError
from tests.runner.batch.support import answers, run
from tests.stub_batches import BatchEndpoints
from tests.stub_server import StubServer
from tests.support import forced_choice_rows, write_suite

STRANGER = "e" * 64
FORGED = "FORGED ANSWER"


def _first_run(tmp_path: Path, stub: StubServer) -> tuple[Path, list[str], bytes]:
    """A suite, the keys its batch run computes, and the batch file that run uploaded (the stub's file-1)."""
    suite = write_suite(tmp_path / "suite", forced_choice_rows(6, 1))
    run(suite, tmp_path / "first", stub, cache_path=tmp_path / "first.sqlite")
    keys = (tmp_path / "first" / "batches" / "r001-p0001.keys").read_text().split()
    return suite, keys, stub.batches.files["file-1"]


def _plant(out: Path, keys: list[str], **part: object) -> None:
    batches = out / "batches"
    batches.mkdir(parents=True)
    entry = {"name": "r001-p0001", "model": "openai/stub", "round": 1, "requests": len(keys), "bytes": 100, **part}
    (batches / "ledger.json").write_text(json.dumps({"parts": [entry]}))
    (batches / "r001-p0001.keys").write_text("".join(f"{key}\n" for key in keys))


def _forged_lines(keys: list[str]) -> bytes:
    """The run's keys over requests of the attacker's choosing: another model, n = 50, 99,999 tokens, tools."""
    body = {"model": "gpt-4o", "n": 50, "max_tokens": 99_999, "tools": [{"type": "function"}],
            "messages": [{"role": "user", "content": f"Answer {FORGED}"}]}
    return b"".join(json.dumps({"custom_id": key, "method": "POST", "url": "/v1/chat/completions",
                                "body": body}).encode() + b"\n" for key in keys)


@pytest.mark.parametrize("model", ["openai/stub", "openai/gpt-4o"])
def test_a_planted_written_part_is_rebuilt_from_the_suite_never_uploaded(tmp_path: Path, stub: StubServer,
                                                                          model: str) -> None:
    suite, keys, ours = _first_run(tmp_path, stub)
    out = tmp_path / "planted"
    _plant(out, keys, model=model, status="written")
    (out / "batches" / "r001-p0001.jsonl").write_bytes(_forged_lines(keys))
    summary = run(suite, out, stub, cache_path=tmp_path / "planted.sqlite")
    assert (summary.done, summary.failed, stub.batches.calls["upload"]) == (6, 0, 2)
    assert stub.batches.files["file-3"] == ours  # the second upload: the run's own lines, byte for byte
    assert all(body["model"] == "stub" and "tools" not in body for body in stub.batches.bodies)
    assert answers(out) == answers(tmp_path / "first")


def test_a_submitted_part_holding_other_requests_under_the_runs_keys_is_refused(tmp_path: Path,
                                                                                 stub: StubServer) -> None:
    suite, keys, _ = _first_run(tmp_path, stub)
    stub.batches.files["file-forged"] = _forged_lines(keys)
    stub.batches.batches["batch_forged"] = {**stub.batches.batches["batch_1"], "id": "batch_forged",
                                            "input_file_id": "file-forged", "status": "validating"}
    out = tmp_path / "planted"
    _plant(out, keys, status="in_progress", input_file_id="file-1", batch_id="batch_forged")
    cache = tmp_path / "planted.sqlite"
    ledger = out / "batches" / "ledger.json"
    with pytest.raises(RunError, match=rf"^{ledger}: batch r001-p0001 \(batch_forged, openai/stub\) does not hold "
                                       r"the requests this run derives from its suite and settings; its answers "
                                       r"are not used\. Cancel it"):
        run(suite, out, stub, cache_path=cache)
    assert stub.batches.calls["create"] == 1 and stub.batches.batches["batch_forged"]["status"] == "in_progress"
    stored = ResponseCache(cache)
    assert all(stored.get(key) is None for key in keys)
    stored.close()


def test_a_part_holding_none_of_the_runs_requests_is_closed_without_a_call(tmp_path: Path, stub: StubServer,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """Its model's provider would be asked with that provider's key: it is never asked."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-planted-test-key")
    suite = write_suite(tmp_path / "suite", forced_choice_rows(4, 1))
    out = tmp_path / "run"
    _plant(out, [STRANGER], model="openai/gpt-4o", status="in_progress", input_file_id="file-9",
           batch_id="batch_9")
    summary = run(suite, out, stub, cache_path=tmp_path / "cache.sqlite", max_retries=0)
    assert (summary.done, summary.failed) == (4, 0)
    assert [(p.name, p.model, p.collected) for p in read_ledger(out).parts] == [
        ("r001-p0001", "openai/gpt-4o", True), ("r002-p0001", "openai/stub", True)]


def test_status_refuses_a_ledger_naming_a_model_the_run_does_not_call(tmp_path: Path, stub: StubServer) -> None:
    suite = write_suite(tmp_path / "suite", forced_choice_rows(2, 1))
    out = tmp_path / "run"
    _plant(out, [STRANGER], model="openai/gpt-4o", status="in_progress", input_file_id="file-9",
           batch_id="batch_9")
    result = CliRunner().invoke(run_command, [str(suite), "--out", str(out), "--model", "openai/stub",
                                              "--api-base", f"http://127.0.0.1:{stub.port}/v1", "--status"])
    assert (result.exit_code, type(result.exception)) == (1, SystemExit)
    assert (f"{out}/batches/ledger.json: batch r001-p0001 names openai/gpt-4o, which this run does not call "
            "(openai/stub); spec asks no provider about it") in result.output
    assert sum(stub.batches.calls.values()) == 0


def test_a_planted_private_cache_never_answers_a_no_cache_run(tmp_path: Path, stub: StubServer) -> None:
    suite, keys, _ = _first_run(tmp_path, stub)
    out = tmp_path / "planted"
    (out / "batches").mkdir(parents=True)
    planted = ResponseCache(out / "batches" / "responses.sqlite")
    for key in keys:
        planted.put(key, {"text": FORGED, "usage": {"prompt_tokens": 1, "completion_tokens": 1},
                          "top_logprobs": None})
    planted.close()
    summary = run(suite, out, stub, use_cache=False)
    assert (summary.done, summary.calls, stub.batches.calls["create"]) == (6, 6, 2)
    assert answers(out) == answers(tmp_path / "first")
    assert FORGED not in (out / "results.jsonl").read_text()


def test_a_no_cache_run_collects_its_answers_again_from_the_provider(tmp_path: Path, stub: StubServer) -> None:
    """Answers a killed --no-cache run collected but did not write are asked of the provider again (no new
    batch), not read from the run folder."""
    suite = write_suite(tmp_path / "suite", forced_choice_rows(6, 1))
    out = tmp_path / "run"
    run(suite, out, stub, use_cache=False)
    written = answers(out)
    (out / "results.jsonl").unlink()
    resumed = run(suite, out, stub, use_cache=False)
    assert (resumed.done, resumed.calls, stub.batches.calls["create"], stub.batches.calls["upload"]) == (6, 0, 1, 1)
    assert answers(out) == written


def test_an_output_answering_one_request_twice_fails_that_request(tmp_path: Path, stub: StubServer) -> None:
    stub.batches.config.tamper = lambda lines: [*lines, lines[0]]
    suite = write_suite(tmp_path / "suite", forced_choice_rows(4, 1))
    summary = run(suite, tmp_path / "run", stub)
    assert (summary.done, summary.failed) == (3, 1)
    assert sorted(row.error or "" for row in read_results(tmp_path / "run" / "results.jsonl")) == ["", "", "", TWICE]


@pytest.mark.parametrize("value", ["12", "many", -1, 2.5, True])
def test_request_counts_that_are_not_counts_are_a_located_error(value: object) -> None:
    part = Part(name="r001-p0001", model="openai/stub", round=1, requests=1, bytes=10)
    counts = SimpleNamespace(total=value, completed=0, failed=0)
    batch = SimpleNamespace(id="batch_1", status="in_progress", request_counts=counts, output_file_id=None,
                            error_file_id=None, errors=None)
    with pytest.raises(FatalError, match=r"^openai/stub: the provider's batch batch_1 \(r001-p0001\) gives "
                                         r"request_counts\.total = .*, not a count; spec does not use that "
                                         r"batch's reply$"):
        update(part, batch)


def test_text_in_a_providers_request_counts_stops_the_run_naming_the_field(tmp_path: Path, stub: StubServer,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    advance = BatchEndpoints._advance

    def texts(self: BatchEndpoints, batch: dict[str, Any]) -> None:
        advance(self, batch)
        batch["request_counts"]["total"] = "many"

    monkeypatch.setattr(BatchEndpoints, "_advance", texts)
    suite = write_suite(tmp_path / "suite", forced_choice_rows(2, 1))
    result = CliRunner().invoke(run_command, [str(suite), "--out", str(tmp_path / "run"), "--model", "openai/stub",
                                              "--api-base", f"http://127.0.0.1:{stub.port}/v1", "--batch", "--poll",
                                              "0.01", "--no-progress", "--no-cache"])
    assert (result.exit_code, type(result.exception)) == (exits.STOPPED, SystemExit)
    assert ("run stopped: openai/stub: batch status failed: the provider's reply is not one litellm can read "
            "(request_counts.total: Input should be a valid integer, unable to parse string as an integer, got "
            "'many'); spec does not use it") in result.output
