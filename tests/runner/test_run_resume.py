"""Resume: SIGKILL at random moments loses nothing written and never duplicates an answer."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from spec_audits.contract.reader import read_results
from spec_audits.contract.results_model import ResultRow
from spec_audits.runner.execute import run_suite
from spec_audits.runner.results_io import prepare_resume
from spec_audits.runner.run_config import RunConfig
from spec_audits.runner.suite_index import item_key
from tests.stub_server import StubConfig, StubServer
from tests.support import ROOT


@pytest.fixture
def slow_stub() -> Iterator[StubServer]:
    server = StubServer(StubConfig(latency_s=0.05, fault_rate=0.1, faults=("429", "500"), seed=3))
    server.start()
    yield server
    server.stop()


def _lines(path: Path) -> int:
    return path.read_bytes().count(b"\n") if path.exists() else 0


def _spawn(suite: Path, out: Path, api_base: str) -> subprocess.Popen[bytes]:
    command = [
        sys.executable,
        "-c",
        "from spec_audits.runner.commands.run_cli import run; run()",
        str(suite),
        "--out",
        str(out),
        "--model",
        "openai/stub",
        "--api-base",
        api_base,
        "--concurrency",
        "6",
        "--retry-base",
        "0.01",
        "--no-progress",
    ]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def _kill_at_random(process: subprocess.Popen[bytes], results: Path, rng: random.Random) -> None:
    """SIGKILL after a random number of new answers (or during start-up), or let it finish."""
    target = _lines(results) + rng.choice([0, rng.randint(1, 60)])
    deadline = time.monotonic() + 60
    while _lines(results) < target and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.005)
    time.sleep(rng.uniform(0, 0.05))
    process.send_signal(signal.SIGKILL)
    process.wait(timeout=30)


def test_sigkill_then_resume_gives_exactly_every_pair_once(
    make_suite: Callable[..., Path], tmp_path: Path, slow_stub: StubServer
) -> None:
    suite = make_suite(n=60, samples=3)
    out = tmp_path / "run"
    api_base = f"http://127.0.0.1:{slow_stub.port}/v1"
    rng = random.Random(2024)
    for _ in range(5):
        _kill_at_random(_spawn(suite, out, api_base), out / "results.jsonl", rng)
    assert 0 < _lines(out / "results.jsonl") < 180, "the kills should land mid-run"
    final = _spawn(suite, out, api_base)
    assert final.wait(timeout=120) == 0, final.stderr.read().decode() if final.stderr else ""
    rows = read_results(out / "results.jsonl")
    keys = [(r.item_id, r.sample) for r in rows]
    assert len(keys) == len(set(keys)) == 180
    assert {r.sample for r in rows} == {0, 1, 2} and all(r.error is None for r in rows)


def _row(item: str, sample: int, error: str | None = None) -> ResultRow:
    return ResultRow(item_id=item, sample=sample, model="m", params={}, answer=None if error else "A", error=error)


def test_a_torn_last_line_is_dropped_and_appending_stays_safe(tmp_path: Path) -> None:
    path = tmp_path / "results.jsonl"
    whole = _row("a", 0).model_dump_json() + "\n"
    path.write_text(whole + _row("b", 0).model_dump_json()[:25])
    state = prepare_resume(path, model="m", retry_failed=False)
    assert state.keys.tolist() == [item_key("a", 0)]
    assert path.read_text() == whole


def test_retry_failed_reattempts_only_failed_items(make_suite: Callable[..., Path], tmp_path: Path) -> None:
    suite = make_suite(n=3, samples=1)
    out = tmp_path / "run"
    server = StubServer(StubConfig(reject_all=503))
    api_base = server.start()
    config = RunConfig(suite_dir=suite, out=out, model="openai/stub", api_base=api_base, max_retries=0, progress=False)
    try:
        assert run_suite(config).failed == 3
        assert run_suite(config).failed == 3 and server.stats.requests == 3  # failures are kept, not re-run
        server.config.reject_all = None
        summary = run_suite(RunConfig(**{**config.__dict__, "retry_failed": True}))
    finally:
        server.stop()
    rows = read_results(out / "results.jsonl")
    assert summary.done == 3 and len(rows) == 3 and all(r.error is None for r in rows)
