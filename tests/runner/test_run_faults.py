"""Faults against a loopback OpenAI-compatible stub: retries, permanent errors, fatal errors, no key leaks."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from spec_audits.contract.reader import read_results
from spec_audits.runner.call import RateLimiter
from spec_audits.runner.execute import run_suite
from spec_audits.runner.run_config import RunConfig
from spec_audits.runner.services.provider_errors import FatalError
from tests.stub_server import StubConfig, StubServer
from tests.support import rewrite_suite

SECRET = "sk-test-0123456789abcdefSECRET"


@pytest.fixture
def stub(request: pytest.FixtureRequest) -> Iterator[StubServer]:
    server = StubServer(getattr(request, "param", None) or StubConfig())
    server.start()
    yield server
    server.stop()


def _config(suite: Path, out: Path, stub: StubServer, **overrides: object) -> RunConfig:
    settings: dict = {
        "model": "openai/stub",
        "api_base": f"http://127.0.0.1:{stub.port}/v1",
        "concurrency": 16,
        "timeout_s": 0.5,
        "max_retries": 8,
        "retry_base_s": 0.01,
        "progress": False,
    }
    return RunConfig(suite_dir=suite, out=out, **{**settings, **overrides})  # type: ignore[arg-type]


@pytest.mark.parametrize("stub", [StubConfig(fault_rate=0.3, hang_s=2.0, seed=7)], indirect=True)
def test_every_item_ends_done_or_failed_with_reason_under_faults(
    make_suite: Callable[..., Path], tmp_path: Path, stub: StubServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    suite = make_suite(n=40, samples=2)
    summary = run_suite(_config(suite, tmp_path / "run", stub))
    rows = read_results(tmp_path / "run" / "results.jsonl")
    assert sorted((r.item_id, r.sample) for r in rows) == sorted({(r.item_id, r.sample) for r in rows})
    assert len(rows) == 80 == summary.done + summary.failed
    assert all(r.error is None and r.answer in ("A", "B") or r.error for r in rows)
    assert set(stub.stats.faults) == {"429", "500", "timeout", "malformed", "empty", "drop"}
    assert summary.done >= 78  # 30% faults and 8 retries: a failure needs 9 faults in a row
    assert stub.stats.auth_headers == {f"Bearer {SECRET}"}


def test_no_api_key_in_any_file_the_runner_writes(
    make_suite: Callable[..., Path],
    tmp_path: Path,
    stub: StubServer,
    monkeypatch: pytest.MonkeyPatch,
    response_cache: Path,
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    run_suite(_config(make_suite(n=6, samples=1), tmp_path / "run", stub))
    written = [*(tmp_path / "run").rglob("*"), *response_cache.parent.rglob("*")]
    assert any(p.name == "results.jsonl" for p in written) and any(p.suffix == ".sqlite" for p in written)
    for path in written:
        assert SECRET.encode() not in path.read_bytes(), path


def test_permanent_error_is_recorded_on_its_item(
    make_suite: Callable[..., Path], tmp_path: Path, stub: StubServer
) -> None:
    suite = make_suite(n=4, samples=1)

    def too_long(index: int, row: dict[str, Any]) -> None:
        if index == 0:
            row["messages"][-1]["content"] += " TOO_LONG"

    row = rewrite_suite(suite, too_long)[0]
    summary = run_suite(_config(suite, tmp_path / "run", stub))
    failed = [r for r in read_results(tmp_path / "run" / "results.jsonl") if r.error]
    assert summary.failed == 1 and failed[0].item_id == row.id
    assert "context" in failed[0].error.lower() and len(failed[0].error) <= 240
    assert stub.stats.requests == 4  # a permanent error is not retried


@pytest.mark.parametrize("stub", [StubConfig(reject_all=401)], indirect=True)
def test_authentication_error_stops_the_run_at_once(
    make_suite: Callable[..., Path], tmp_path: Path, stub: StubServer
) -> None:
    with pytest.raises(FatalError, match="AuthenticationError"):
        run_suite(_config(make_suite(n=30, samples=2), tmp_path / "run", stub, concurrency=2))
    assert stub.stats.requests <= 2
    assert read_results(tmp_path / "run" / "results.jsonl") == []


@pytest.mark.parametrize("stub", [StubConfig(invalid_rate=0.5, seed=1)], indirect=True)
def test_invalid_answers_are_reasked_and_counted_apart_from_first_answers(
    make_suite: Callable[..., Path], tmp_path: Path, stub: StubServer
) -> None:
    run_suite(_config(make_suite(n=20, samples=2), tmp_path / "run", stub, reasks=10))
    rows = read_results(tmp_path / "run" / "results.jsonl")
    reasked = [r for r in rows if r.reasks]
    assert reasked and all(r.first_answer is None for r in reasked)
    assert all(r.first_answer == r.answer for r in rows if not r.reasks)
    assert all(r.answer in ("A", "B") for r in rows)  # 0.5^11: every sample ends valid
    assert stub.stats.requests == len(rows) + sum(r.reasks for r in rows)


def test_without_reasks_an_invalid_answer_is_an_abstention_keeping_the_text(
    make_suite: Callable[..., Path], tmp_path: Path
) -> None:
    server = StubServer(StubConfig(invalid_rate=1.0))
    server.start()
    try:
        run_suite(_config(make_suite(n=2, samples=1), tmp_path / "run", server))
    finally:
        server.stop()
    for row in read_results(tmp_path / "run" / "results.jsonl"):
        assert (row.answer, row.outcome, row.error, row.response) == (None, None, None, "I cannot choose.")


@pytest.mark.parametrize("stub", [StubConfig(logprobs=False)], indirect=True)
def test_logprob_mode_falls_back_to_sampling_when_the_model_gives_no_logprobs(
    make_suite: Callable[..., Path], tmp_path: Path, stub: StubServer, capsys: pytest.CaptureFixture[str]
) -> None:
    summary = run_suite(_config(make_suite(n=5, samples=3, mode="logprob"), tmp_path / "run", stub))
    assert summary.mode == "sample" and summary.done == 15
    assert capsys.readouterr().err.count("returns no logprobs") == 1
    info = json.loads((tmp_path / "run" / "run.json").read_text())
    assert info["mode"] == "sample" and info["settings"]["mode"] == "logprob" and info["notes"]


def test_logprob_mode_against_a_server_with_logprobs(
    make_suite: Callable[..., Path], tmp_path: Path, stub: StubServer
) -> None:
    summary = run_suite(_config(make_suite(n=5, samples=3, mode="logprob"), tmp_path / "run", stub))
    rows = read_results(tmp_path / "run" / "results.jsonl")
    assert summary.mode == "logprob" and len(rows) == 5
    assert all(r.logprobs and abs(r.logprobs["A"] + r.logprobs["B"] - 1) < 1e-9 for r in rows)


def test_rate_limiter_spreads_requests_beyond_the_minute_allowance() -> None:
    now = [0.0]
    slept: list[float] = []

    async def sleep(seconds: float) -> None:  # the limiter's clock moves only when it sleeps
        slept.append(seconds)
        now[0] += seconds

    limiter = RateLimiter(per_minute=120, clock=lambda: now[0], sleep=sleep)  # a burst of 120, then 2 per second

    async def take(n: int) -> None:
        for _ in range(n):
            await limiter.acquire()

    asyncio.run(take(120))
    assert slept == []
    asyncio.run(take(2))
    assert slept == [pytest.approx(0.5), pytest.approx(0.5)] and now[0] == pytest.approx(1.0)
