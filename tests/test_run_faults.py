"""Faults against a loopback OpenAI-compatible stub: retries, permanent errors, fatal errors, no key leaks."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from stub_server import StubConfig, StubServer

from runner.call import FatalError
from runner.execute import RunConfig, run_suite
from runner.results_io import read_results

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
    lines = (suite / "suite.jsonl").read_text().splitlines()
    row = json.loads(lines[0])
    row["messages"][-1]["content"] += " TOO_LONG"
    (suite / "suite.jsonl").write_text("\n".join([json.dumps(row), *lines[1:]]) + "\n")
    summary = run_suite(_config(suite, tmp_path / "run", stub))
    failed = [r for r in read_results(tmp_path / "run" / "results.jsonl") if r.error]
    assert summary.failed == 1 and failed[0].item_id == row["id"]
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
