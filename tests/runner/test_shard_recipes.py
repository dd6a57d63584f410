"""docs/running.md's Slurm array and Kubernetes Indexed Job recipes, run as written: each shard's `spec run` in its
own process (as the scheduler starts it, with its index in the environment), one shard SIGKILLed mid-run and
started again with the same command, then the recipe's `spec merge`. The commands are taken from the doc, so
the doc cannot drift from what is tested: only the suite, the model (the loopback stub) and the shard count
are put in."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from spec_audits.contract.reader import read_results, read_run_info, read_suite
from spec_audits.runner.plan import plan
from tests.stub_server import StubConfig, StubServer
from tests.support import ROOT

DOC = (ROOT / "docs" / "running.md").read_text(encoding="utf-8")
SHARDS = 3
KILLED = 2


def _command(pattern: str) -> str:
    """The doc's command that `pattern` finds, its shell line continuations joined."""
    found = re.search(pattern, DOC, flags=re.DOTALL)
    assert found, f"docs/running.md no longer holds {pattern!r}"
    return re.sub(r"\\\n\s*|\n\s*", " ", found.group(0)).strip()


RECIPES = {
    "slurm": (_command(r"spec run generated/triage [^\n]*--shard \$SLURM_ARRAY_TASK_ID/8 \\\n[^\n]*"),
              _command(r"spec merge runs/triage-s\* --out runs/triage"), "SLURM_ARRAY_TASK_ID", 1),
    "kubernetes": (_command(r"i=\$\(\(JOB_COMPLETION_INDEX \+ 1\)\);\n\s*spec run [^\n]*\n[^\n]*--no-progress"),
                   _command(r"spec merge /runs/triage-s\* --out /runs/triage"), "JOB_COMPLETION_INDEX", 0),
}


@pytest.fixture
def stub() -> Iterator[StubServer]:
    server = StubServer(StubConfig(latency_s=0.02))
    server.start()
    yield server
    server.stop()


def _here(command: str, suite: Path, api_base: str) -> str:
    """The doc's command against the test's suite and stub, with SHARDS shards, in the working folder."""
    model = f"openai/stub --api-base {api_base} --no-cache --retry-base 0.01"
    return (command.replace("generated/triage", str(suite)).replace("openai/gpt-4o-mini", model)
            .replace("/8 ", f"/{SHARDS} ").replace("/runs/", "runs/"))


def _start(command: str, folder: Path, variable: str, value: int) -> subprocess.Popen[bytes]:
    """`command` under sh as the scheduler starts a task: its index in the environment, `spec` on the PATH."""
    bin_dir = folder / "bin"
    if not bin_dir.exists():
        bin_dir.mkdir()
        (bin_dir / "spec").write_text(f'#!/bin/sh\nexec {sys.executable} -c '
                                      f'"from spec_audits.cli import main; main()" "$@"\n')
        (bin_dir / "spec").chmod(0o755)
    env = {**os.environ, variable: str(value), "PATH": f"{bin_dir}:{os.environ['PATH']}", "PYTHONPATH": str(ROOT)}
    return subprocess.Popen(["sh", "-c", command], cwd=folder, env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE)


def _lines(path: Path) -> int:
    return path.read_bytes().count(b"\n") if path.exists() else 0


def _kill_mid_run(process: subprocess.Popen[bytes], results: Path) -> None:
    deadline = time.monotonic() + 120
    while _lines(results) < 3 and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.01)
    process.send_signal(signal.SIGKILL)
    process.wait(timeout=30)


@pytest.mark.slow
@pytest.mark.parametrize("recipe", sorted(RECIPES))
def test_a_recipe_s_shards_run_apart_resume_and_merge_to_every_answer_once(
        recipe: str, make_suite: Callable[..., Path], tmp_path: Path, stub: StubServer) -> None:
    run, merge, variable, first = RECIPES[recipe]
    suite = make_suite(n=45, samples=2)
    api_base = f"http://127.0.0.1:{stub.port}/v1"
    command = _here(run, suite, api_base)
    # exec: the shell becomes the shard's process, so the kill lands on the run itself
    tasks = {i: _start(command.replace("spec run", "exec spec run", 1), tmp_path, variable, i - 1 + first)
             for i in range(1, SHARDS + 1)}
    killed_results = tmp_path / "runs" / f"triage-s{KILLED}" / "results.jsonl"
    _kill_mid_run(tasks[KILLED], killed_results)
    for i, task in tasks.items():
        if i != KILLED:
            assert task.wait(timeout=300) == 0, task.stderr.read().decode() if task.stderr else ""
    written = _lines(killed_results)
    planned = read_run_info(killed_results.parent).planned
    assert 0 < written < planned, "the kill should land mid-run"
    again = _start(command, tmp_path, variable, KILLED - 1 + first)  # the task resubmitted with its index
    assert again.wait(timeout=300) == 0, again.stderr.read().decode() if again.stderr else ""
    resumed = [(row.item_id, row.sample) for row in read_results(killed_results)]
    assert len(resumed) == len(set(resumed)) == planned  # the resumed shard asked only what it lacked
    merged = _start(_here(merge, suite, api_base), tmp_path, variable, 0)
    assert merged.wait(timeout=300) == 0, merged.stderr.read().decode() if merged.stderr else ""
    rows = read_results(tmp_path / "runs" / "triage" / "results.jsonl")
    expected = sorted(work.key for work in plan(read_suite(suite).rows, mode="sample"))
    assert sorted((row.item_id, row.sample) for row in rows) == expected
    assert all(row.error is None and row.answer in ("A", "B") for row in rows)
    info = read_run_info(tmp_path / "runs" / "triage")
    assert (info.planned, info.done, info.failed) == (90, 90, 0)
