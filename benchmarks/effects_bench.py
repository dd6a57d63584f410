"""Effects designs at a million stimuli: compile cost per stimulus against the influence family's, and the
effects analysis of a million logprob rows.

Prints figures (not a test). Each compile runs in a fresh subprocess and the two designs alternate
`--repeat` times (the fastest CPU time of each counts: other work on the machine only slows a run down).

* compile: a demographic-decisions-shaped design (9 ages x 3 genders x 5 races x 2 conditions, the
  scenarios made up to the size) against the influence family's synthetic triage-shaped design of
  benchmarks/compile_bench.py, both at about the same number of rows; printed side by side as CPU
  microseconds per stimulus and their ratio (target: effects within 1.2x influence).
* score: a million logprob rows (P(yes) with planted age shifts, 200 scenarios) through the whole analysis
  of one model (contrasts, BH-FDR, the regression on logit P, per-scenario shifts), clustered by scenario
  (target: under 10 s on 2 cores); then the first 100,000 of them with a random intercept per scenario
  (statsmodels MixedLM, which fits row by row: at a million rows it ran past 7 minutes, so the benchmark
  does not wait for it).

    .venv/bin/python benchmarks/effects_bench.py             # 1M stimuli
    .venv/bin/python benchmarks/effects_bench.py --quick     # 100k stimuli, 100k scored rows
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from benchmarks.compile_bench import machine, synthetic_spec  # noqa: E402

COMBINATIONS = 9 * 3 * 5 * 2  # rows per scenario
INFLUENCE_SIZES = {1_000_000: 82, 100_000: 26}  # compile_bench's synthetic design: sizes 1..X -> about N rows
MIXED_ROWS = 100_000  # rows the MixedLM fit is timed on


def effects_spec(scenarios: int, folder: Path) -> Path:
    """specs/demographic_decisions.spec, its scenarios made up to `scenarios` rows."""
    text = (ROOT / "specs" / "demographic_decisions.spec").read_text(encoding="utf-8")
    text = text.replace('"data/demographic_decisions/scenarios.csv"', '"scenarios.csv"')
    lines = ["id,subject,details,question"] + [
        f"s{i},A person has applied for case {i}.,Their record is mixed but improving.,Should it be approved?"
        for i in range(scenarios)]
    (folder / "scenarios.csv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    path = folder / "effects.spec"
    path.write_text(text, encoding="utf-8")
    return path


def child(kind: str, size: int) -> None:
    from spec_audits.compiler.dispatch.build import compile_file

    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        if kind == "effects":
            spec = effects_spec(size // COMBINATIONS, folder)
        else:
            spec = folder / "influence.spec"
            spec.write_text(synthetic_spec(INFLUENCE_SIZES[size]), encoding="utf-8")
        cpu = time.process_time()
        manifest, _ = compile_file(spec, folder / "out")
        print(json.dumps({"rows": manifest.rows, "cpu": time.process_time() - cpu}))


def measure(kind: str, size: int) -> dict[str, Any]:
    done = subprocess.run([sys.executable, __file__, "--child", kind, str(size)], cwd=ROOT, check=True,
                          capture_output=True, text=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def compile_side_by_side(size: int, repeat: int) -> None:
    runs: dict[str, list[dict[str, Any]]] = {"effects": [], "influence": []}
    for _ in range(repeat):
        for kind in runs:
            runs[kind].append(measure(kind, size))
    best = {kind: min(found, key=lambda r: r["cpu"] / r["rows"]) for kind, found in runs.items()}
    per = {kind: 1e6 * r["cpu"] / r["rows"] for kind, r in best.items()}
    print(f"{'design':<11}{'rows':>11}{'cpu s':>8}{'us/stimulus':>13}")
    for kind, r in best.items():
        print(f"{kind:<11}{r['rows']:>11,}{r['cpu']:>8.2f}{per[kind]:>13.1f}")
    print(f"effects / influence cost per stimulus: {per['effects'] / per['influence']:.2f}x (target <= 1.2x)")


def synthetic_frame(rows: int) -> Any:
    import numpy as np
    import pandas as pd

    rng = np.random.default_rng(7)
    ages = [f"a{a}" for a in range(20, 101, 10)]
    shift = dict(zip(ages, np.linspace(0.1, -0.2, len(ages)), strict=True))
    frame = pd.DataFrame({"scenario": rng.integers(0, 200, rows).astype(str), "age": rng.choice(ages, rows),
                          "gender": rng.choice(["man", "woman", "nonbinary"], rows),
                          "race": rng.choice(["white", "black", "asian", "hispanic", "native"], rows),
                          "condition": rng.choice(["baseline", "no_discrimination"], rows)})
    scenario_effect = rng.normal(0, 0.05, 200)[frame["scenario"].astype(int).to_numpy()]
    p = 0.6 + frame["age"].map(shift).to_numpy() + scenario_effect + rng.normal(0, 0.05, rows)
    return frame.assign(y_yes=np.clip(p, 0.01, 0.99))


def score(rows: int) -> None:
    from spec_audits.families.effects.score.frame import Loaded
    from spec_audits.families.effects.score.pipeline import analyse

    analysis = json.loads((ROOT / "generated" / "demographic_decisions" / "manifest.json").read_text())["analysis"]
    frame = synthetic_frame(rows)
    for effect, size in (("cluster", rows), ("random", min(rows, MIXED_ROWS))):
        loaded = Loaded(frame.iloc[:size], {**analysis, "scenario_effect": effect}, "logprob", "synthetic", 0, 0)
        cpu, wall = time.process_time(), time.perf_counter()
        found = analyse(loaded, "yes")
        print(f"score {size:,} logprob rows, regression {found['regression']['model']!r}: "
              f"{time.process_time() - cpu:.2f} s CPU, {time.perf_counter() - wall:.2f} s wall "
              f"({len(found['contrasts'])} contrasts, {len(found['regression']['terms'])} terms; target < 10 s)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="100k stimuli and 100k scored rows")
    parser.add_argument("--repeat", type=int, default=2, help="alternating compiles of each design; the best counts")
    parser.add_argument("--child", nargs=2, metavar=("KIND", "SIZE"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child[0], int(args.child[1]))
        return
    size = 100_000 if args.quick else 1_000_000
    print(f"machine: {machine()}")
    compile_side_by_side(size, args.repeat)
    score(size)
    print(f"machine after: {machine()}")


if __name__ == "__main__":
    main()
