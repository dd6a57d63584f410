"""Cost growth with a suite's size: compile, dry-run, run against the loopback stub and score 10,000, 100,000 and
1,000,000 rows, printing time per row and peak RSS of each step (issue 34).

Each step is the `spec` command itself in its own process, its peak RSS read from the kernel's accounting of
that process (os.wait4). The suite is the triage-shaped synthetic design of benchmarks/compile_bench.py with
one sample per row (5 factors x 2 orders x 15 rows x sizes^2), run with --no-cache against
tests/stub_server.py (in its own process, on the same cores), at --concurrency 64.

A call costs the runner about 3-4 ms of CPU through litellm (docs/running.md, "Throughput"), so a million calls
are an hour of a core: `--run-limit N` runs a stratified `--limit N` of each suite instead (the whole suite is
still read, hashed and planned, which is what grows with its size), and the rows it did not run are then
answered by the benchmark itself (as the stub answers, without a call; not timed) so that `spec score` scores
every row of the suite. The stub answers with the family's answer tokens (`STUB_TOKENS` of
benchmarks/scale_families.py: yes or no for effects, else A or B), so a logprob run's rows have an answer even
where `--run-limit` covers every row of a case.

    .venv/bin/python benchmarks/scale_bench.py                        # 10k, 100k and 1M rows, every row run
    .venv/bin/python benchmarks/scale_bench.py --quick                # stop at 100k
    nice -n 19 .venv/bin/python benchmarks/scale_bench.py --run-limit 10000
    nice -n 19 .venv/bin/python benchmarks/scale_bench.py --family effects --run-limit 2000 --steps score

`--family NAME` builds that family's shipped spec with its data made up to about 10,000, 100,000 and 1,000,000
rows instead (benchmarks/scale_families.py says how, and what size each family's designs realistically reach);
`--cases` picks the sizes. `--keep DIR` keeps each case's folders, so that one step can be measured again alone
before and after a change (`cd DIR/cue-100k && /usr/bin/time -v spec score run --out score2`: run.json names the
suite relative to that folder; docs/scoring.md's and docs/cognitive-bias.md's Memory paragraphs give such figures).

Targets: peak RSS at 10x the rows at most 1.25x, for run and for score; 1,000,000 rows compiled, run and
scored with peak RSS under 500 MiB.
Measured (influence, --run-limit 10000, nice 19, load average 8-11): run 237 -> 275 MiB (1.16x) and score
305 -> 391 MiB (1.28x) from 100k to 1M rows on main before issue 34's last round; `spec score` alone on those folders
after it: 303 -> 363 MiB (1.20x; docs/scoring.md, "Memory").
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.compile_bench import machine, synthetic_spec  # noqa: E402
from benchmarks.scale_families import FAMILIES, STUB_TOKENS, token  # noqa: E402

SIZES = {"10k": 8, "100k": 26, "1M": 82}  # sizes per side: 150 x size^2 rows (9,600, 101,400 and 1,008,600)
ROWS = {"10k": 10_000, "100k": 100_000, "1M": 1_000_000}  # about this many rows for the other families
STEPS = ("compile", "dry-run", "run", "score")
SPEC = [sys.executable, "-c", "from spec_audits.cli import main; main()"]


def one_sample(size: int) -> str:
    """The synthetic design with one sample per row, so that rows and calls agree."""
    return synthetic_spec(size).replace("samples 8 split by order", "samples 1")


def measure(args: list[str], cwd: Path) -> tuple[float, float, float]:
    """Wall seconds, CPU seconds (user + system: steadier than wall on a shared machine) and peak RSS (MiB) of
    `spec ARGS` in its own process; its output goes to a log beside it."""
    start = time.perf_counter()
    with (cwd / "log.txt").open("a") as log:
        process = subprocess.Popen([*SPEC, *args], cwd=cwd, stdout=log, stderr=log)
        _, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode not in (0, 4):  # 4: some items failed, which the run reports; the figures still hold
        raise SystemExit(f"spec {' '.join(args)} exited {process.returncode}; see {cwd / 'log.txt'}")
    return time.perf_counter() - start, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def start_stub(family: str) -> tuple[subprocess.Popen[str], str]:
    stub = subprocess.Popen([sys.executable, str(ROOT / "tests" / "stub_server.py"), "--lifetime", "36000",
                             "--tokens", STUB_TOKENS.get(family, "A,B")], stdout=subprocess.PIPE, text=True)
    assert stub.stdout is not None
    return stub, stub.stdout.readline().strip()


def step_args(step: str, api_base: str, limit: int | None) -> list[str]:
    run = ["run", "suite", "--model", "openai/stub", "--out", "run", "--no-progress",
           *(["--limit", str(limit)] if limit else [])]
    return {
        "compile": ["compile", "scale.spec", "--out", "suite"],
        "dry-run": [*run, "--dry-run"],
        "run": [*run, "--api-base", api_base, "--no-cache", "--concurrency", "64"],
        "score": ["score", "run", "--out", "score"],
    }[step]


def answer_the_rest(folder: Path) -> None:
    """Append an answer for every suite row the run did not answer, as the stub answers (one of the row's tokens by
    a hash; in a logprob run with its probability 0.7, the others sharing the rest)."""
    from spec_audits.contract.reader import iter_results, read_run_info, scan_suite
    from spec_audits.contract.results_model import ResultRow
    from spec_audits.contract.suite_model import SuiteRow

    done = {row.item_id for _, row in iter_results(folder / "run" / "results.jsonl")}
    logprob = read_run_info(folder / "run").mode == "logprob"
    with (folder / "run" / "results.jsonl").open("ab") as out:

        def answer(offset: int, row: SuiteRow) -> None:
            if row.id in done:
                return
            tokens = list(row.answers)
            chosen = token(row.id, tokens)
            rest = 0.3 / max(1, len(tokens) - 1)
            for sample in range(row.samples):
                out.write(ResultRow(item_id=row.id, sample=sample, model="openai/stub", params={}, response=chosen,
                                    answer=chosen, outcome=row.answers[chosen], first_answer=chosen, reasks=0,
                                    logprobs={t: 0.7 if t == chosen else rest for t in tokens} if logprob else None,
                                    ).model_dump_json().encode() + b"\n")

        scan_suite(folder / "suite", answer)


def bench(case: str, steps: list[str], api_base: str, limit: int | None, family: str,
          keep: Path | None) -> tuple[int, dict[str, tuple[float, float, float]]]:
    """The suite's rows and each step's figures; with `keep`, the folders stay in keep/FAMILY-CASE."""
    figures: dict[str, tuple[float, float, float]] = {}
    with tempfile.TemporaryDirectory(prefix=f"scale-{case}-") as tmp:
        folder = Path(tmp) if keep is None else keep / f"{family}-{case}"
        folder.mkdir(parents=True, exist_ok=keep is None)
        if family == "influence":
            (folder / "scale.spec").write_text(one_sample(SIZES[case]), encoding="utf-8")
        else:
            FAMILIES[family](folder, ROWS[case])
        for step in STEPS:
            if step in steps or step == "compile" or (step == "run" and "score" in steps):
                if step == "score" and limit:
                    answer_the_rest(folder)
                figures[step] = measure(step_args(step, api_base, limit), folder)
        rows = json.loads((folder / "suite" / "manifest.json").read_text(encoding="utf-8"))["rows"]
    return rows, figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="stop at 100,000 rows")
    parser.add_argument("--run-limit", type=int, metavar="N",
                        help="run a stratified --limit N of each suite (the rest is answered without calls)")
    parser.add_argument("--steps", nargs="+", choices=STEPS, default=list(STEPS),
                        help="steps to measure (compile always runs; run runs whenever score is asked for)")
    parser.add_argument("--family", choices=["influence", *FAMILIES], default="influence",
                        help="the family whose synthetic suite is measured (benchmarks/scale_families.py)")
    parser.add_argument("--keep", type=Path, metavar="DIR", help="keep each case's folders in DIR/FAMILY-CASE")
    parser.add_argument("--cases", nargs="+", choices=list(SIZES), help="the sizes to measure (default: all)")
    args = parser.parse_args()
    cases = args.cases or (["10k", "100k"] if args.quick else list(SIZES))
    stub, api_base = start_stub(args.family)
    print(f"machine: {machine()}")
    print(f"family: {args.family}")
    if args.run_limit:
        print(f"run: --limit {args.run_limit} of each suite; the other rows answered without calls before scoring")
    print(f"{'case':<6}{'rows':>11}  {'step':<8}{'wall s':>9}{'cpu s':>8}{'cpu us/row':>11}{'peak MiB':>10}")
    results: dict[str, dict[str, tuple[float, float, float]]] = {}
    try:
        for case in cases:
            rows, results[case] = bench(case, args.steps, api_base, args.run_limit, args.family, args.keep)
            for step, (seconds, cpu, peak) in results[case].items():
                print(f"{case:<6}{rows:>11,}  {step:<8}{seconds:>9.1f}{cpu:>8.1f}{1e6 * cpu / rows:>11.1f}"
                      f"{peak:>10.0f}", flush=True)
    finally:
        stub.terminate()
    report(cases, results)
    print(f"machine after: {machine()}")


def report(cases: list[str], results: dict[str, dict[str, tuple[float, float, float]]]) -> None:
    """Peak RSS growth per 10x rows for each step, and the largest peak against the 500 MiB budget."""
    print()
    for small, large in zip(cases, cases[1:], strict=False):
        for step in results[large]:
            ratio = results[large][step][2] / results[small][step][2]
            print(f"{step}: peak RSS {large}/{small} {ratio:.2f}x; target <= 1.25x for run and score")
    peak = max(peak for figures in results.values() for _, _, peak in figures.values())
    print(f"largest peak RSS: {peak:.0f} MiB; target < 500 MiB at 1M rows")


if __name__ == "__main__":
    main()
