"""A provider's batch files and a run folder's batch records are data: a line that is not ours is ignored,
a reply that is not a chat completion fails its own item, an id that is not plain is never sent back, and a
damaged ledger is an error naming it, never a path to follow."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from types import SimpleNamespace

import pytest

from spec_audits.contract.reader import read_results
from spec_audits.runner.batch.client import BatchClient, Outcomes
from spec_audits.runner.batch.ledger import Part, read_errors, read_ledger
from spec_audits.runner.batch.parts import update
from spec_audits.runner.call import CallSettings
from spec_audits.runner.run_config import RunError
from spec_audits.runner.services.cache import NoCache
from spec_audits.runner.services.provider_errors import FatalError
from tests.runner.batch.support import run
from tests.stub_server import StubServer
from tests.support import forced_choice_rows, write_suite

STRANGER = "f" * 64


def _hostile(lines: list[bytes]) -> list[bytes]:
    """Keep the first answer; break the others each a different way; add lines naming no request of ours."""
    entries = [json.loads(line) for line in lines]
    body = entries[1]["response"]["body"]
    broken = [
        {**entries[1], "response": {"status_code": 200, "body": {"choices": []}}},
        {**entries[2], "response": {"status_code": 200, "body": {**body, "choices": [
            {"index": 0, "message": {"role": "assistant", "content": {"not": "text"}}}]}}},
        {**entries[3], "response": {"status_code": 200, "body": {**body, "choices": [
            {"index": 0, "message": {"role": "assistant", "content": ""}}]}}},
        {**entries[4], "response": "gone"},
        {**entries[5], "response": {"status_code": 200, "body": {**body, "choices": [
            {"index": 0, "message": {"role": "assistant", "content": "B"},
             "logprobs": {"content": [{"token": 7, "logprob": "x"}]}}]}}},
    ]
    strangers = [{"custom_id": STRANGER, "response": {"status_code": 200, "body": body}},
                 {"custom_id": ["list"], "response": None}]
    return [lines[0], *(json.dumps(e).encode() + b"\n" for e in [*broken, *strangers]),
            b"not json\n", b"[" * 100_000 + b"\n"]


def test_each_damaged_reply_fails_its_own_item_and_strangers_are_ignored(tmp_path: Path, stub: StubServer) -> None:
    stub.batches.config.tamper = _hostile
    suite = write_suite(tmp_path / "suite", forced_choice_rows(8, 1))
    summary = run(suite, tmp_path / "run", stub)
    assert (summary.done, summary.failed) == (1, 7)
    errors = sorted(row.error or "" for row in read_results(tmp_path / "run" / "results.jsonl"))
    assert errors == sorted([
        "",
        "batch request failed: the batch's reply is not a chat completion",
        "batch request failed: the batch's reply is not a chat completion",
        "batch request failed: the model returned no content",
        "batch request failed: no response",
        "batch request failed: the batch's reply is not a chat completion",
        "batch completed: no result for this request",  # the two lines after the sixth are gone
        "batch completed: no result for this request",
    ])
    assert STRANGER not in read_errors(tmp_path / "run")
    assert STRANGER not in (tmp_path / "run" / "results.jsonl").read_text()


@pytest.mark.parametrize("name", ["../../outside", "/etc/passwd", "r001-p0001/../../x"])
def test_a_ledger_naming_a_path_is_refused_before_any_file_is_opened(tmp_path: Path, stub: StubServer,
                                                                     name: str) -> None:
    suite = write_suite(tmp_path / "suite", forced_choice_rows(2, 1))
    ledger = tmp_path / "run" / "batches" / "ledger.json"
    ledger.parent.mkdir(parents=True)
    ledger.write_text(json.dumps({"parts": [{"name": name, "model": "openai/stub", "round": 1, "requests": 1,
                                             "bytes": 10, "batch_id": "batch_1"}]}))
    with pytest.raises(RunError, match=rf"^{ledger}: not a batch ledger spec wrote \(parts\.0\.name: String should "
                                       r"match pattern"):
        run(suite, tmp_path / "run", stub)
    assert sum(stub.batches.calls.values()) == 0


@pytest.mark.parametrize("batch_id", ["batch_1/../../files", "batch?x=1", "../v1/files", "b" * 201, 7])
def test_a_provider_id_that_is_not_plain_is_never_sent_back(batch_id: object) -> None:
    part = Part(name="r001-p0001", model="openai/stub", round=1, requests=1, bytes=10)
    batch = SimpleNamespace(id=batch_id, status="in_progress", request_counts=None, output_file_id=None,
                            error_file_id=None, errors=None)
    with pytest.raises(FatalError, match=r"^openai/stub: the provider's batch id .* is not a plain id; spec does "
                                         r"not send it back$"):
        update(part, batch)
    assert part.batch_id is None


def test_damaged_request_errors_are_an_error_naming_the_file(tmp_path: Path, stub: StubServer) -> None:
    suite = write_suite(tmp_path / "suite", forced_choice_rows(2, 1))
    run(suite, tmp_path / "run", stub)
    errors = tmp_path / "run" / "batches" / "errors.json"
    errors.write_text('{"../x": "y"}')
    with pytest.raises(RunError, match=rf"^{errors}: not the request errors spec wrote; delete it"):
        run(suite, tmp_path / "run", stub)
    assert read_ledger(tmp_path / "run").parts[0].collected


@pytest.mark.parametrize("stray", [{"api_base": "http://elsewhere"}, {"mock_response": "A"}, {"extra_headers": {}}])
def test_a_batch_line_carries_decode_settings_only(stray: dict[str, object]) -> None:
    """The same check as a live call's, before a line is written: a row that got past the reader can neither
    send the batch elsewhere nor forge its answer."""
    outcomes = Outcomes()
    client = BatchClient(CallSettings("openai/stub"), NoCache(), outcomes=outcomes)
    with pytest.raises(FatalError, match=r"^refusing to send .* to the model: not a decode setting$"):
        asyncio.run(client.call([{"role": "user", "content": "A or B?"}], {"max_tokens": 2, **stray}, "0/answer0", {}))
    assert outcomes.needed == {}
