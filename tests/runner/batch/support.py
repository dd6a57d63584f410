"""Runs of a suite against the stub, live or in batches, and their rows compared as a scorer reads them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from spec_audits.contract.reader import read_results
from spec_audits.runner.execute import run_suite
from spec_audits.runner.run_config import RunConfig, RunSummary
from tests.stub_server import StubServer

# What a live run and a batch run of the same answers may differ in: how long a call took, where it came from.
TIMING = {"latency_s", "cached"}


def run(suite: Path, out: Path, stub: StubServer, batch: bool = True, **settings: Any) -> RunSummary:
    config = RunConfig(suite_dir=suite, out=out, model="openai/stub", api_base=f"http://127.0.0.1:{stub.port}/v1",
                       batch=batch, poll_s=0.01, retry_base_s=0.01, progress=False, **settings)
    return run_suite(config)


def answers(out: Path) -> dict[tuple[str, int], dict[str, Any]]:
    """(item, sample) -> its result row less timing."""
    rows = read_results(out / "results.jsonl")
    return {(r.item_id, r.sample): r.model_dump(exclude=TIMING) for r in rows}
