"""Batch mode vs live mode: this process's CPU time per 10,000 calls against the loopback stub, side by side.

Each round runs the same suite (forced-choice rows, `--calls` answers) once live (concurrency 64) and once in
batches (files of at most `--batch-size` requests, polled every 0.05 s), each into a fresh run folder and
response cache, and reads this process's CPU time (every thread: litellm builds its requests in a worker
thread) around each run. The stub runs in its own process, so its CPU is not counted; what is left is what a
run costs the machine it runs on. Rounds alternate which mode goes first; the minimum of each is printed.

Usage: python benchmarks/batch_bench.py [--calls 10000] [--rounds 2] [--batch-size 5000]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from spec_audits.runner.execute import run_suite  # noqa: E402
from spec_audits.runner.run_config import RunConfig  # noqa: E402
from tests.support import forced_choice_rows, write_suite  # noqa: E402

PER = 10_000


def cpu_of(config: RunConfig) -> tuple[float, int]:
    """(seconds of this process's CPU, calls answered) of one run."""
    started = time.process_time()
    summary = run_suite(config)
    return time.process_time() - started, summary.done


def configs(tmp: Path, suite: Path, api_base: str, tag: str, batch_size: int) -> dict[str, RunConfig]:
    common = {"suite_dir": suite, "model": "openai/stub", "api_base": api_base, "progress": False}
    return {
        "live": RunConfig(out=tmp / f"live-{tag}", cache_path=tmp / f"live-{tag}.sqlite", concurrency=64, **common),
        "batch": RunConfig(out=tmp / f"batch-{tag}", cache_path=tmp / f"batch-{tag}.sqlite", batch=True,
                           batch_size=batch_size, poll_s=0.05, **common),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calls", type=int, default=PER)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--batch-size", type=int, default=5_000)
    args = parser.parse_args()
    stub = subprocess.Popen([sys.executable, str(ROOT / "tests" / "stub_server.py"), "--lifetime", "3600"],
                            stdout=subprocess.PIPE, text=True)
    assert stub.stdout is not None
    api_base = stub.stdout.readline().strip()
    tmp = Path(tempfile.mkdtemp(prefix="spec-batch-bench-"))
    try:
        suite = write_suite(tmp / "suite", forced_choice_rows(args.calls // 4, 4))
        warm = write_suite(tmp / "warm", forced_choice_rows(4, 1))
        for config in configs(tmp, warm, api_base, "warm", args.batch_size).values():
            cpu_of(config)  # litellm's first-call set-up, paid once by any run
        best: dict[str, float] = {}
        for index in range(args.rounds):
            runs = list(configs(tmp, suite, api_base, str(index), args.batch_size).items())
            for mode, config in runs if index % 2 == 0 else runs[::-1]:
                seconds, done = cpu_of(config)
                assert done == args.calls, f"{mode}: {done} of {args.calls} answered"
                best[mode] = min(best.get(mode, seconds), seconds)
                print(f"round {index + 1} {mode:5}: {seconds * PER / args.calls:6.2f} s CPU per {PER:,} calls",
                      flush=True)
    finally:
        stub.terminate()
    live, batch = best["live"] * PER / args.calls, best["batch"] * PER / args.calls
    print(f"\nCPU per {PER:,} calls (min of {args.rounds}): live {live:.2f} s, batch {batch:.2f} s, "
          f"batch / live = {batch / live:.3f}; load average {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
