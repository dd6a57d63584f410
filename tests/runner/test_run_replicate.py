"""`spec run --replicate N` (fresh answers, never another run's cached ones) and `--only KEY=VALUE` (the rows a
noise-floor replicate re-issues: its baselines)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from spec_audits.cli import main
from spec_audits.contract.writer import suite_row
from spec_audits.runner.item_runner import Runner
from spec_audits.runner.run_config import RunConfig
from spec_audits.runner.services.cache import NoCache
from tests.stub_server import StubServer
from tests.support import forced_choice_rows, write_suite


@pytest.fixture
def stub() -> Iterator[tuple[StubServer, str]]:
    server = StubServer()
    yield server, server.start()
    server.stop()


def _suite(folder: Path) -> Path:
    """6 rows of 2 samples: 2 baseline rows, 4 toward_A rows."""
    rows = []
    for i, row in enumerate(forced_choice_rows(6, 2)):
        body = row.model_dump(exclude_none=True, exclude={"id"})
        body["cell"]["condition"] = "baseline" if i < 2 else "toward_A"
        rows.append(suite_row(body))
    return write_suite(folder, rows)


def _run(suite: Path, out: Path, api_base: str, *extra: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, ["run", str(suite), "--model", "openai/stub", "--api-base", api_base,
                                       "--out", str(out), "--no-progress", *extra])
    return result.exit_code, result.output


def test_a_replicate_reissues_the_baselines_without_reading_the_cache(tmp_path: Path,
                                                                     stub: tuple[StubServer, str]) -> None:
    (server, api), suite = stub, _suite(tmp_path / "suite")
    assert _run(suite, tmp_path / "orig", api)[0] == 0
    assert server.stats.requests == 12
    code, output = _run(suite, tmp_path / "again", api)  # a plain rerun replays the cache: no noise at all
    assert code == 0 and "; 0 calls, 12 cache hits\n" in output
    code, output = _run(suite, tmp_path / "rep", api, "--replicate", "1", "--only", "condition=baseline")
    assert code == 0, output
    assert "4 answered, 0 failed of 4 (sample mode); 4 calls, 0 cache hits\n" in output
    assert server.stats.requests == 16
    settings = json.loads((tmp_path / "rep" / "run.json").read_text())["settings"]
    assert (settings["replicate"], settings["only"]) == (1, [["condition", "baseline"]])
    code, output = _run(suite, tmp_path / "rep", api)  # resuming it as an ordinary run is refused
    assert code == 1 and "holds a run of" in output


def test_only_must_keep_a_row(tmp_path: Path, stub: tuple[StubServer, str]) -> None:
    code, output = _run(_suite(tmp_path / "suite"), tmp_path / "run", stub[1], "--only", "condition=nothing")
    assert code == 1 and output.endswith(f"--only condition=nothing keeps no row of {tmp_path / 'suite'}\n")
    code, output = _run(_suite(tmp_path / "suite"), tmp_path / "run", stub[1], "--only", "condition")
    assert code == 2 and "expected KEY=VALUE" in output
    assert not (tmp_path / "run").exists()


def test_a_replicate_gets_its_own_seeds_where_seeds_apply(tmp_path: Path) -> None:
    row = forced_choice_rows(1, 2)[0]
    seeds = [Runner(RunConfig(suite_dir=tmp_path, out=tmp_path, model="local/gemma-3-270m", replicate=k), "sample",
                    NoCache()).decode(row, 1, 0, "local/gemma-3-270m")["seed"] for k in (None, 1, 2)]
    assert len(set(seeds)) == 3
