"""Embedded model, forced choice: the grammar path (before) and the logits path (now), side by side on the
Quickstart subset (`spec run generated/triage --limit 150`: 150 rows x 4 samples, max_tokens 16).

before: llama-cpp-python's create_chat_completion with a grammar over the row's answers, in plan order, as
        spec_audits/local/model.py called it until issue 14 (one evaluation per sample, llama-cpp-python's own
        prefix match, a grammar over 262k tokens at every step).
now:    LocalModel.choose in the runner's order for local models (spec_audits.runner.plan.prefix_order): one evaluation
        per prompt, cut where spec_audits/local/evaluator.py cuts, the shared prefix reused, answers drawn from the
        valid tokens' logits.

The two run on separate Llama objects with the same threads, interleaved block by block (the machine is
shared: each block of rows runs before, then now, or now, then before; a block is rows that are neighbours
in prefix order, taken by `before` in plan order), and the ratio is taken over the sums. CPU seconds of
this process are printed beside wall seconds: with one thread they are the least disturbed by other work.

`--run` also times the Quickstart's main command, `spec run ... --limit 150` with an empty response cache,
start to exit in a child process, on each path in the order before, now, now, before ("before" puts the
grammar and plan order back into the runner), against the 90 s target and the 4x ratio.

Usage: python benchmarks/local_model_bench.py [--rows 150] [--block 10] [--threads N] [--run]
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

from llama_cpp import LlamaGrammar

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from spec_audits.compiler.dispatch.build import compile_file  # noqa: E402
from spec_audits.contract.reader import read_suite  # noqa: E402
from spec_audits.contract.suite_model import SuiteRow  # noqa: E402
from spec_audits.local.model import LocalModel, _gemma_messages, busy_cores, default_gguf, default_threads  # noqa: E402
from spec_audits.runner.plan import WorkItem, plan, prefix_order  # noqa: E402

QUICKSTART_LIMIT = 150
_GRAMMARS: dict[tuple[str, ...], LlamaGrammar] = {}


def quickstart_items(suite_dir: Path, rows: int) -> list[WorkItem]:
    """The Quickstart's work items in plan order (its --limit and default --seed 0), the first `rows` rows."""
    suite = read_suite(suite_dir)
    items = plan(suite.rows, mode="sample", limit=QUICKSTART_LIMIT, seed=0, strata=suite.strata)
    kept = list(dict.fromkeys(work.row.id for work in items))[:rows]
    return [work for work in items if work.row.id in set(kept)]


def messages(row: SuiteRow) -> list[dict[str, str]]:
    return _gemma_messages([m.model_dump(exclude_none=True) for m in row.messages])


def grammar_reply(llm: Any, messages: list[dict[str, str]], params: dict[str, Any]) -> dict[str, Any]:
    """A forced-choice reply as spec_audits/local/model.py made it before issue 14."""
    tokens = tuple(params["answer_tokens"])
    if tokens not in _GRAMMARS:
        literals = " | ".join('"' + t.replace("\\", "\\\\").replace('"', '\\"') + '"' for t in tokens)
        _GRAMMARS[tokens] = LlamaGrammar.from_string(f"root ::= {literals}", verbose=False)
    return llm.create_chat_completion(
        messages=messages,
        max_tokens=int(params.get("max_tokens") or 256),
        temperature=float(params.get("temperature", 1.0)),
        top_p=float(params.get("top_p", 1.0)),
        seed=params.get("seed"),
        grammar=_GRAMMARS[tokens],
    )


def before(llm: Any, items: list[WorkItem]) -> list[str]:
    answers = []
    for work in items:
        params = {**work.row.decode, "seed": work.sample, "answer_tokens": list(work.row.answers)}
        answers.append(grammar_reply(llm, messages(work.row), params)["choices"][0]["message"]["content"])
    return answers


def now(model: LocalModel, items: list[WorkItem]) -> list[str]:
    answers = []
    for work in prefix_order(items):
        params = {**work.row.decode, "seed": work.sample, "answer_tokens": list(work.row.answers)}
        answers.append(model.choose(messages(work.row), params)["choices"][0]["message"]["content"])
    return answers


def timed(run: object, *args: object) -> tuple[float, float, list[str]]:
    wall, cpu = time.perf_counter(), time.process_time()
    answers = run(*args)  # type: ignore[operator]
    return time.perf_counter() - wall, time.process_time() - cpu, answers


def load_note() -> str:
    one, five, _ = os.getloadavg()
    return f"load average {one:.1f} (1 min) {five:.1f} (5 min), {busy_cores():.1f} of {os.cpu_count()} cores busy"


def compare(items: list[WorkItem], block: int, threads: int) -> None:
    from llama_cpp import Llama

    old = Llama(model_path=str(default_gguf()), n_ctx=2048, n_threads=threads, n_threads_batch=threads,
                chat_format="gemma", verbose=False)
    new = LocalModel(default_gguf(), threads)
    rows = list(dict.fromkeys(work.row.id for work in prefix_order(items)))  # blocks of neighbours in that order
    blocks = [[w for w in items if w.row.id in set(rows[i:i + block])] for i in range(0, len(rows), block)]
    totals = {"before": [0.0, 0.0], "now": [0.0, 0.0]}
    counts: dict[str, Counter[str]] = {"before": Counter(), "now": Counter()}
    print(f"{len(rows)} rows, {len(items)} answers, {threads} thread(s), blocks of {block} rows; {load_note()}")
    for index, part in enumerate(blocks):
        runs = [("before", before, old), ("now", now, new)]
        for name, run, model in runs if index % 2 == 0 else runs[::-1]:
            wall, cpu, answers = timed(run, model, part)
            totals[name][0] += wall
            totals[name][1] += cpu
            counts[name].update(answers)
    for name, (wall, cpu) in totals.items():
        print(f"{name:>7}: {len(items) / wall:6.2f} answers/s wall ({wall:6.1f} s), "
              f"{len(items) / cpu:6.2f} per CPU second ({cpu:6.1f} s); answers {dict(sorted(counts[name].items()))}")
    ratio_wall = totals["before"][0] / totals["now"][0]
    ratio_cpu = totals["before"][1] / totals["now"][1]
    print(f"  ratio: {ratio_wall:.2f}x wall, {ratio_cpu:.2f}x CPU (target >= 4x); "
          f"now decoded {new.evaluator.decoded / len(rows):.1f} tokens per row; {load_note()}")
    old.close()
    new.close()


def spec_run(path: str, suite_dir: Path, out: Path) -> None:
    """`spec run SUITE --limit 150` in this process, on the `path` ("before" patches the grammar path and
    plan order back in)."""
    import spec_audits.runner.execute
    from spec_audits.cli import main

    if path == "before":
        def grammar_choose(self: LocalModel, messages: list[dict[str, str]], params: dict[str, Any]) -> Any:
            with self.lock:
                return grammar_reply(self.llm, messages, params)

        LocalModel.choose = grammar_choose  # type: ignore[method-assign]
        spec_audits.runner.execute.prefix_order = lambda items: items  # type: ignore[attr-defined]
    main(["run", str(suite_dir), "--limit", str(QUICKSTART_LIMIT), "--out", str(out), "--no-progress"])


def quickstart_runs(suite_dir: Path, tmp: Path) -> None:
    """The Quickstart's `spec run` on each path in a child process with an empty response cache: wall and
    CPU seconds from start to exit (imports and model load included)."""
    seconds: dict[str, tuple[float, float]] = {}
    for index, path in enumerate(("before", "now", "now", "before")):  # each path once early, once late
        out = tmp / f"run-{index}-{path}"
        env = {**os.environ, "SPEC_RESPONSE_CACHE": str(out) + ".sqlite"}
        cpu = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.perf_counter()
        done = subprocess.run([sys.executable, __file__, "--spec-run", path, str(suite_dir), str(out)], env=env,
                              capture_output=True, text=True, check=True)
        wall = time.perf_counter() - started
        used = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu_s = used.ru_utime + used.ru_stime - cpu.ru_utime - cpu.ru_stime
        print(f"spec run --limit {QUICKSTART_LIMIT}, {path:>6}: {wall:6.1f} s wall, {cpu_s:6.1f} s CPU; "
              f"{done.stdout.strip().splitlines()[-1]}; {load_note()}")
        old_wall, old_cpu = seconds.get(path, (0.0, 0.0))
        seconds[path] = (old_wall + wall / 2, old_cpu + cpu_s / 2)
    (before_wall, before_cpu), (now_wall, now_cpu) = seconds["before"], seconds["now"]
    print(f"  mean of two: before {before_wall:.1f} s, now {now_wall:.1f} s wall (target < 90 s); "
          f"ratio {before_wall / now_wall:.2f}x wall, {before_cpu / now_cpu:.2f}x CPU (target >= 4x)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=QUICKSTART_LIMIT, help="the first N rows of the subset")
    parser.add_argument("--block", type=int, default=10, help="rows per interleaved block")
    parser.add_argument("--threads", type=int, default=None, help="default: local_model.default_threads()")
    parser.add_argument("--run", action="store_true", help="also time the Quickstart's spec run, both paths")
    parser.add_argument("--spec-run", nargs=3, metavar=("PATH", "SUITE", "OUT"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.spec_run:
        return spec_run(args.spec_run[0], Path(args.spec_run[1]), Path(args.spec_run[2]))
    with tempfile.TemporaryDirectory() as tmp:
        suite_dir = Path(tmp) / "triage"
        compile_file(ROOT / "specs" / "triage.spec", suite_dir)
        items = quickstart_items(suite_dir, args.rows)
        compare(items, args.block, args.threads or default_threads())
        if args.run:
            quickstart_runs(suite_dir, Path(tmp))


if __name__ == "__main__":
    main()
