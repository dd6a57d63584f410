"""A run folder's batch records are a stranger's data: a planted part is never uploaded or submitted, its
answers never enter the cache under the run's keys, a planted private cache never answers a --no-cache run,
and a ledger cannot send a call to a model the run does not make. Every hostile input is made here."""

from __future__ import annotations

import asyncio
import hashlib
import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from click.testing import CliRunner

from spec_audits.base import exits
from spec_audits.contract.reader import read_results
from spec_audits.runner.batch.api import BatchApi
from spec_audits.runner.batch.collect import TWICE
from spec_audits.runner.batch.ledger import read_ledger
from spec_audits.runner.batch.parts import Part, update
from spec_audits.runner.batch.providers import batch_provider
from spec_audits.runner.batch.verify import batch_metadata, made_of
from spec_audits.runner.commands.run_cli import run as run_command
from spec_audits.runner.run_config import RunError
from spec_audits.runner.services.cache import ResponseCache
from spec_audits.runner.services.provider_errors import FatalError
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


def _digest(data: bytes, model: str = "openai/stub") -> dict[str, str]:
    """The metadata spec gives a batch made of `data` (as another run of spec would have)."""
    return {"spec_part": "r001-p0001", "spec_model": model, "spec_sha256": hashlib.sha256(data).hexdigest()}


def _plant_batch(stub: StubServer, data: bytes, metadata: dict[str, str] | None) -> None:
    """A batch made with the user's key of `data` (file-forged), recording `metadata`: batch_forged."""
    stub.batches.files["file-forged"], stub.batches.purposes["file-forged"] = data, "batch"
    stub.batches.batches["batch_forged"] = {**stub.batches.batches["batch_1"], "id": "batch_forged",
                                            "input_file_id": "file-forged", "status": "validating",
                                            "metadata": metadata}


@pytest.mark.parametrize("made_of", ["another run's lines", "no metadata", "no digest", "another model"])
def test_a_submitted_part_not_recording_the_runs_digest_is_refused(tmp_path: Path, stub: StubServer,
                                                                   made_of: str) -> None:
    """Its input file is never downloaded (the stub refuses, as OpenAI may): the batch's own metadata says
    what it was made of, and a batch that does not record the digest of the run's lines is not the run's."""
    suite, keys, ours = _first_run(tmp_path, stub)
    forged = _forged_lines(keys)
    metadata = {"another run's lines": _digest(forged), "no metadata": None, "no digest": {"spec_part": "r001-p0001"},
                "another model": _digest(ours, "openai/gpt-4o")}[made_of]
    _plant_batch(stub, forged, metadata)
    out = tmp_path / "planted"
    _plant(out, keys, status="in_progress", input_file_id="file-1", batch_id="batch_forged")
    cache = tmp_path / "planted.sqlite"
    ledger = out / "batches" / "ledger.json"
    with pytest.raises(RunError, match=rf"^{ledger}: batch r001-p0001 \(batch_forged, openai/stub\) does not hold "
                                       r"the requests this run derives from its suite and settings; its answers "
                                       r"are not used\. Cancel it"):
        run(suite, out, stub, cache_path=cache)
    assert (stub.batches.calls["create"], stub.batches.calls["upload"], stub.batches.calls["content"]) == (1, 1, 1)
    assert stub.batches.batches["batch_forged"]["status"] == "in_progress"  # retrieved once, never collected
    stored = ResponseCache(cache)
    assert all(stored.get(key) is None for key in keys)
    stored.close()


def test_a_submitted_part_recording_the_runs_digest_is_collected_without_its_input(tmp_path: Path,
                                                                                    stub: StubServer) -> None:
    """The run's own batch, named by a ledger in another folder, is collected (its output downloaded), with
    no upload, no create and no download of its input file."""
    suite, keys, _ = _first_run(tmp_path, stub)
    out = tmp_path / "planted"
    _plant(out, keys, status="in_progress", input_file_id="file-1", batch_id="batch_1")
    summary = run(suite, out, stub, cache_path=tmp_path / "planted.sqlite")
    assert (summary.done, summary.calls) == (6, 0)
    assert (stub.batches.calls["create"], stub.batches.calls["upload"], stub.batches.calls["content"]) == (1, 1, 2)
    assert stub.batches.calls["refused input download"] == 0
    assert answers(out) == answers(tmp_path / "first")


@pytest.mark.parametrize("batch", ["no batch", "a batch of it"])
def test_an_uploaded_part_is_uploaded_again_from_the_suite_never_read_back(tmp_path: Path, stub: StubServer,
                                                                          batch: str) -> None:
    """A part the ledger records as uploaded names a file of other requests (and maybe a batch made of it):
    the run neither downloads that file nor adopts that batch; it uploads its own lines and submits those."""
    suite, keys, ours = _first_run(tmp_path, stub)
    forged = _forged_lines(keys)
    _plant_batch(stub, forged, _digest(forged))
    if batch == "no batch":
        del stub.batches.batches["batch_forged"]
    out = tmp_path / "planted"
    _plant(out, keys, status="uploaded", input_file_id="file-forged")
    summary = run(suite, out, stub, cache_path=tmp_path / "planted.sqlite")
    assert (summary.done, summary.failed, stub.batches.calls["upload"], stub.batches.calls["create"]) == (6, 0, 2, 2)
    (part,) = read_ledger(out).parts
    made = stub.batches.batches[part.batch_id or ""]
    assert made["metadata"] == _digest(ours) and stub.batches.files[made["input_file_id"]] == ours
    assert stub.batches.calls["refused input download"] == 0
    assert all(body["model"] == "stub" and "tools" not in body for body in stub.batches.bodies)
    assert answers(out) == answers(tmp_path / "first")


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


def test_the_stub_keeps_metadata_through_litellm_and_refuses_input_downloads(stub: StubServer) -> None:
    """What the tests above rest on: litellm passes a batch's metadata to the provider and reads it back, and
    the stub, as OpenAI may, gives back no file of purpose "batch" (a run needing one would stop here)."""
    api = BatchApi("openai/stub", batch_provider("openai/stub"), f"http://127.0.0.1:{stub.port}/v1", max_retries=0)
    part = Part(name="r001-p0001", model="openai/stub", round=1, requests=1, bytes=3)
    metadata = batch_metadata(part, b"{}\n")

    async def steps() -> tuple[Any, Any]:
        uploaded = await api.upload(part.name, b"{}\n")
        made = await api.submit(uploaded.id, metadata, may_exist=False)
        return await api.retrieve(made.id), await api.find(uploaded.id, metadata)

    retrieved, found = asyncio.run(steps())
    assert retrieved.metadata == metadata == stub.batches.batches["batch_1"]["metadata"]
    assert found.id == "batch_1" and made_of(found, metadata)
    assert metadata["spec_sha256"] == hashlib.sha256(b"{}\n").hexdigest()
    with pytest.raises(FatalError, match=r"^openai/stub: batch download failed: BadRequestError.*Not allowed to "
                                         r"download files of purpose: batch"):
        asyncio.run(api.content("file-1"))
