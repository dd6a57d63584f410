"""Batch mode gives the rows a live run gives: generated (and shared) turns, re-asks, follow-ups and their
judges go in successive rounds, each built from the previous round's answers, with the request bodies a
live call sends."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from spec_audits.contract.suite_model import SuiteRow
from spec_audits.contract.writer import suite_row
from spec_audits.runner.batch.ledger import read_ledger
from tests.runner.batch.support import answers, run
from tests.stub_server import StubConfig, StubServer
from tests.support import write_suite

JUDGE = '{"label": "DENIED", "reason": "It saw no cue."}'


def _rows() -> list[SuiteRow]:
    """Two units whose arms share a generated turn and are followed up and judged, and seeded rows whose
    invalid first answers (the stub's, by hash) are re-asked."""
    rows = []
    judge = {"labels": ["ACK", "DENIED"], "prompt": "JUDGE this: {{ reply }}", "reply": "json",
             "model": "openai/judge"}
    for unit in range(2):
        for arm in ("control", "treatment"):
            rows.append(suite_row({
                "messages": [{"role": "user", "content": f"Situation {unit}."},
                             {"role": "assistant", "generate": True, "share": f"u{unit}", "decode": {"max_tokens": 8}},
                             {"role": "user", "content": f"Decide ({arm}): A or B?"}],
                "samples": 2, "cell": {"unit": f"u{unit}", "arm": arm}, "answers": {"A": "a", "B": "b"},
                "decode": {"temperature": 0.0, "max_tokens": 2}, "unit": f"u{unit}",
                "followups": [{"name": "why", "content": "Why?", "judge": judge}],
            }))
    for i in range(12):
        rows.append(suite_row({
            "messages": [{"role": "user", "content": f"Prompt {i}: A or B?"}], "samples": 2,
            "cell": {"unit": f"s{i}", "arm": "solo"}, "answers": {"A": "a", "B": "b"},
            "decode": {"temperature": 1.0, "max_tokens": 2, "seed": 7}, "unit": f"s{i}",
        }))
    return sorted(rows, key=lambda r: r.id)


def _bodies(bodies: list[dict[str, Any]]) -> set[str]:
    return {json.dumps(body, sort_keys=True) for body in bodies}


@pytest.mark.parametrize("stub", [StubConfig(record=True, invalid_hash_rate=0.4, replies=(("JUDGE", JUDGE),))],
                         indirect=True)
def test_batch_rounds_give_the_live_rows_and_send_the_live_bodies(
    tmp_path: Path, stub: StubServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", f"http://127.0.0.1:{stub.port}/v1")  # the judge's: it has no --api-base
    monkeypatch.setenv("OPENAI_API_KEY", "test")
    suite = write_suite(tmp_path / "suite", _rows())
    live = run(suite, tmp_path / "live", stub, batch=False, reasks=3, cache_path=tmp_path / "live.sqlite")
    batch = run(suite, tmp_path / "batch", stub, reasks=3, cache_path=tmp_path / "batch.sqlite")
    assert (batch.done, batch.failed, batch.cache_hits) == (live.done, live.failed, 0) == (32, 0, 0)
    assert answers(tmp_path / "batch") == answers(tmp_path / "live")
    assert _bodies(stub.batches.bodies) == _bodies(stub.stats.bodies)
    assert any(row["reasks"] and row["answer"] for row in answers(tmp_path / "batch").values())
    judged = [row for row in answers(tmp_path / "batch").values() if row["followups"]]
    assert len(judged) == 8 and all(row["followups"]["why"]["label"] == "DENIED" for row in judged)
    parts = read_ledger(tmp_path / "batch").parts
    by_model = {(part.round, part.model) for part in parts}
    # the turn, the answer and the follow-up, then the judge; re-asks in rounds 2 to 5 beside them
    assert {model for _, model in by_model} == {"openai/stub", "openai/judge"}
    assert min(r for r, m in by_model if m == "openai/judge") == 4 and len({r for r, _ in by_model}) >= 4
    assert batch.calls == sum(part.requests for part in parts) == len(stub.batches.bodies)


def test_a_rerun_of_a_finished_batch_run_calls_nothing(tmp_path: Path, stub: StubServer) -> None:
    suite = write_suite(tmp_path / "suite", [row for row in _rows() if not row.followups][:6])
    first = run(suite, tmp_path / "run", stub)
    again = run(suite, tmp_path / "run", stub)
    assert (first.done, again.resumed, again.calls, stub.batches.calls["create"]) == (12, 12, 0, 1)


@pytest.mark.parametrize("stub", [StubConfig(record=True, replies=(("JUDGE", JUDGE),))], indirect=True)
def test_a_judge_that_is_the_run_model_goes_to_api_base_live_and_in_batches(
    tmp_path: Path, stub: StubServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """--api-base is the run model's, the judge's too when the judge is that model: a live run and a batch run
    send its calls to the same server, so both give the same rows and cache them under the same key (a batch
    run used to send them to --api-base but key them as calls to the provider's own endpoint)."""
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.delenv("OPENAI_API_BASE", raising=False)
    monkeypatch.setenv("OPENAI_API_KEY", "test")
    rows = [row.model_copy(update={"followups": [f.model_copy(update={"judge": f.judge.model_copy(
        update={"model": "openai/stub"})}) for f in row.followups]}) for row in _rows() if row.followups][:2]
    suite = write_suite(tmp_path / "suite", rows)
    live = run(suite, tmp_path / "live", stub, batch=False, cache_path=tmp_path / "live.sqlite")
    assert (live.done, live.failed) == (4, 0)
    assert any("JUDGE" in json.dumps(body) for body in stub.stats.bodies)  # the judge reached the stub
    batch = run(suite, tmp_path / "batch", stub, cache_path=tmp_path / "live.sqlite")
    assert (batch.done, batch.calls) == (4, 0)  # every call, the judge's included, found under the live key
    assert answers(tmp_path / "batch") == answers(tmp_path / "live")
    assert all(row["followups"]["why"]["label"] == "DENIED" for row in answers(tmp_path / "live").values())
