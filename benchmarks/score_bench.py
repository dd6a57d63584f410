"""Benchmark `spec score`: 1,000,000 trials from a run folder, all tests, 5,000 bootstrap resamples.

Targets (issue 14): loading the run (run.json, the suite, results.jsonl parsed and checked) < 2 s;
loading + scoring + summary <= 10 s on a 2-core machine (writing the synthetic run, with lines as the
runner writes them, is setup and is not timed). Beside the load runs its reference: json.loads of every
results.jsonl line, the plain way to read the file. A second figure scores a paper-scale counts table.
Run: python benchmarks/score_bench.py
"""

from __future__ import annotations

import json
import os
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

from spec_audits.families.influence.score.counts import BASE_KEYS, CountsTable, counts_from_trials
from spec_audits.families.influence.score.options import Options
from spec_audits.families.influence.score.pipeline import score, write
from spec_audits.families.influence.score.runs import load_run
from spec_audits.families.influence.score.synthetic import Design, write_run, write_suite

FACTORS = {
    "age": ("young", "old"),
    "gender": ("male", "female"),
    "handedness": ("left-handed", "right-handed"),
    "nationality": ("American", "Nigerian"),
    "wealth": ("poor", "rich"),
}
INFLUENCES = (
    "emotional",
    "few_shot_3",
    "role_play",
    "survey_preference",
    "user_preference",
    "virtue_appeal",
    "weak_evidence",
)
SIZES = tuple((a, b) for a in range(1, 11) for b in range(1, 11))
SAMPLES = 67  # 5 factors x (1 baseline + 14 directed) x 100 sizes x 2 orders x 67 = 1,005,000 trials


def prob_b(factor: str, influence: str | None, condition: str) -> float:
    shift = {"baseline": 0.0, "toward_A": -0.15, "toward_B": 0.2}[condition]
    return float(np.clip(0.45 + 0.02 * len(factor) % 0.2 + shift + 0.01 * len(influence or ""), 0.02, 0.98))


def timed(label: str, fn, *args, **kwargs):
    start = time.perf_counter()
    value = fn(*args, **kwargs)
    elapsed = time.perf_counter() - start
    print(f"  {label:<34} {elapsed:6.2f} s")
    return value, elapsed


def plain_parse(path: Path) -> list[dict]:
    """The reference: every line through json.loads."""
    return [json.loads(line) for line in path.read_bytes().splitlines()]


def bench_run(tmp: Path) -> float:
    design = Design(factors=FACTORS, influences=INFLUENCES, sizes=SIZES, samples=SAMPLES)
    rows = write_suite(tmp / "suite", design)
    write_run(tmp / "run", tmp / "suite", rows, prob_b, model="bench/model", reasoning="off")
    trials = sum(r.samples for r in rows)
    size = (tmp / "run" / "results.jsonl").stat().st_size
    print(f"run folder: {len(rows):,} items, {trials:,} trials, results.jsonl {size / 1e6:.0f} MB")
    run, t_load = timed("load run (parse + validate)", load_run, tmp / "run")
    _, t_plain = timed("reference: json.loads per line", plain_parse, tmp / "run" / "results.jsonl")
    counts, t_count = timed("pool counts", counts_from_trials, run.trials, run.keys, run.source)
    scores, t_score = timed("statistics + BH + summary (B=5000)", score, counts, Options(bootstrap=5000))
    _, t_write = timed("write conditions.csv + summary.json", write, scores, tmp / "out")
    total = t_load + t_count + t_score + t_write
    print(f"load: {t_load:.2f} s; reference json.loads per line {t_plain:.2f} s; ratio {t_load / t_plain:.2f}; "
          "target load < 2 s")
    print(f"score total: {total:.2f} s ({trials / total:,.0f} trials/s); reference load {t_load:.2f} s; "
          f"ratio {total / t_load:.2f}; target total <= 10 s")
    return total


def bench_counts() -> float:
    rng = np.random.default_rng(0)
    n = 1498
    frame = pd.DataFrame(
        {
            "benchmark": rng.choice(["triage", "bbq", "dailydilemmas"], n),
            "model": rng.choice([f"m{i}" for i in range(10)], n),
            "factor": rng.choice([f"f{i}" for i in range(9)], n),
            "influence": [f"i{i}" for i in rng.integers(0, 7, n)],
            "group_A": "a",
            "group_B": "b",
        }
    )
    frame = frame.drop_duplicates(BASE_KEYS).reset_index(drop=True)
    for column in ("c_0_A", "c_0_B", "c_A_A", "c_A_B", "c_B_A", "c_B_B"):
        frame[column] = rng.integers(0, 800, len(frame)).astype(float)
    print(f"counts table: {len(frame):,} conditions, 3 benchmarks")
    _, elapsed = timed("score (B=5000, mixed models)", score, CountsTable(frame, BASE_KEYS), Options())
    return elapsed


def machine() -> str:
    return f"{os.cpu_count()} CPUs, load average " + ", ".join(f"{x:.2f}" for x in os.getloadavg()) + " (1, 5, 15 min)"


if __name__ == "__main__":
    print(f"machine: {machine()}")
    with tempfile.TemporaryDirectory() as tmp:
        bench_run(Path(tmp))
    bench_counts()
    print(f"machine after: {machine()}")
