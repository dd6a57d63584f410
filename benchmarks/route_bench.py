"""The runner's CPU per call through litellm's `hosted_vllm/` route against its `openai/` route, both to the same
OpenAI-compatible server (tests/stub_server.py, in its own process): what docs/running.md's vLLM advice rests on.

Each round runs the same 400-row suite once per route with no cache, in this process, and takes the process's
CPU seconds (user + system) per call; the first round only warms litellm up and the least of the others counts.

    .venv/bin/python benchmarks/route_bench.py [--rows 400] [--rounds 4]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("OPENAI_API_KEY", "stub")
os.environ.setdefault("HOSTED_VLLM_API_KEY", "stub")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.compile_bench import machine  # noqa: E402
from benchmarks.runner_bench import start_stub  # noqa: E402
from spec_audits.runner.execute import run_suite  # noqa: E402
from spec_audits.runner.run_config import RunConfig  # noqa: E402
from tests.support import forced_choice_rows, write_suite  # noqa: E402

ROUTES = ("openai/stub", "hosted_vllm/stub")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=400)
    parser.add_argument("--rounds", type=int, default=4)
    args = parser.parse_args()
    stub, api_base = start_stub(0.0)
    print(f"machine: {machine()}")
    ms: dict[str, list[float]] = {route: [] for route in ROUTES}
    try:
        with tempfile.TemporaryDirectory() as tmp:
            suite = write_suite(Path(tmp) / "suite", forced_choice_rows(args.rows, 1), "sample")
            for round_ in range(args.rounds):
                for route in ROUTES:
                    config = RunConfig(suite_dir=suite, out=Path(tmp) / f"{route.split('/')[0]}-{round_}", model=route,
                                       api_base=api_base, use_cache=False, progress=False, concurrency=32)
                    start = time.process_time()
                    assert run_suite(config).done == args.rows
                    if round_:
                        ms[route].append(1000 * (time.process_time() - start) / args.rows)
    finally:
        stub.terminate()
    for route, figures in ms.items():
        print(f"{route}: {min(figures):.2f} ms CPU per call (rounds: {', '.join(f'{f:.2f}' for f in figures)})")
    print(f"hosted_vllm/ / openai/: {min(ms[ROUTES[1]]) / min(ms[ROUTES[0]]):.2f}x the CPU per call")
    print(f"machine after: {machine()}")


if __name__ == "__main__":
    main()
