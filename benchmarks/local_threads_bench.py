"""Embedded-model threads: prompts/s with n_threads 1 and 2, on an idle machine and with one core busy.

llama.cpp's worker threads spin while they wait for each other, so a thread on a core that another
process holds stalls every step. The figures choose spec_audits.local.model.default_threads; each cell runs
the same prompts (the triage suite's first user prompts) in both modes the runner uses: logprob
(read the answer tokens' logits) and sample (forced choice, max_tokens 16). Each cell starts from a new
evaluator, so no prompt's logits are kept from an earlier cell.

Usage: python benchmarks/local_threads_bench.py [--prompts 40] [--threads 1 2]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from spec_audits.compiler.dispatch.build import compile_file  # noqa: E402
from spec_audits.local.evaluator import Evaluator  # noqa: E402
from spec_audits.local.model import LocalModel, _gemma_messages, default_gguf  # noqa: E402


def prompts(count: int) -> list[list[dict[str, str]]]:
    with tempfile.TemporaryDirectory() as tmp:
        compile_file(ROOT / "specs" / "triage.spec", Path(tmp) / "triage")
        with (Path(tmp) / "triage" / "suite.jsonl").open() as lines:
            rows = [json.loads(line) for _, line in zip(range(count), lines, strict=False)]
    return [_gemma_messages(row["messages"]) for row in rows]


def rate(model: LocalModel, batch: list[list[dict[str, str]]], mode: str) -> float:
    model.evaluator.close()
    model.evaluator = Evaluator(model.llm)
    started = time.perf_counter()
    for messages in batch:
        if mode == "logprob":
            model.score(messages, ["A", "B"])
        else:
            params = {"answer_tokens": ["A", "B"], "forced_choice": True, "max_tokens": 16, "seed": 1}
            model.choose(messages, params)
    return len(batch) / (time.perf_counter() - started)


def busy_core() -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "-c", "while True: pass"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--prompts", type=int, default=40)
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    args = parser.parse_args()
    batch = prompts(args.prompts)
    models = {threads: LocalModel(default_gguf(), threads) for threads in args.threads}
    for model in models.values():
        for mode in ("logprob", "sample"):  # warm-up: buffers, and the answer tokens' table
            rate(model, batch[:3], mode)
    figures: dict[tuple[int, str, str], float] = {}
    for load in ("idle", "one core busy"):
        spinner = busy_core() if load != "idle" else None
        try:
            for threads, model in models.items():
                for mode in ("logprob", "sample"):
                    figures[threads, load, mode] = rate(model, batch, mode)
        finally:
            if spinner:
                spinner.kill()
    print(f"{args.prompts} triage prompts, gemma-3-270m Q4_K_M; prompts/s")
    print(f"{'threads':>8} {'load':>14} {'logprob':>9} {'sample':>9}")
    for (threads, load, mode), value in figures.items():
        if mode == "logprob":
            print(f"{threads:>8} {load:>14} {value:>9.1f} {figures[threads, load, 'sample']:>9.1f}")
    base = min(args.threads)
    for threads in args.threads:
        for load in ("idle", "one core busy"):
            ratio = figures[threads, load, "logprob"] / figures[base, "idle", "logprob"]
            print(f"logprob, {threads} threads, {load}: {ratio:.2f}x {base} thread idle")
    for model in models.values():
        model.close()


if __name__ == "__main__":
    main()
