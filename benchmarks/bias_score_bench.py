"""Benchmark conditional-bias scoring at the paper's size: 24,300 bank rows (9 target x 9 human biases x
300 scenarios, 2,700 units), every estimator: Table 1, the three 9x9 cell tables, the diagonal test, DiD
in both variants with clustered SEs, SCM with placebos, PSM, and the plots.

Target: under 30 s on a 2-core machine (building the synthetic frame is setup and is not timed).
Run: python benchmarks/bias_score_bench.py
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

from spec_audits.contract.suite_model import Manifest
from spec_audits.families.cognitive_bias.score.load import BiasRun
from spec_audits.families.cognitive_bias.score.metric import effects
from spec_audits.families.cognitive_bias.score.outputs import score_run

ORDER = ["Anchoring", "Availability Heuristic", "Bandwagon Effect", "Confirmation Bias", "Framing Effect",
         "In Group Bias", "Loss Aversion", "Planning Fallacy", "Status Quo Bias"]
PSM = ["sim_sentiment", "sim_assertiveness", "sim_emotional_intensity", "sim_word_count"]
SCM = [*PSM, "jury_target_rating", "jury_purity", "jury_naturalness"]


def synthetic_rows(scenarios: int = 300, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    records = []
    for target in ORDER:
        for scenario in range(scenarios):
            unit = f"{target}|{scenario}"
            m_zero, m_neutral = rng.uniform(-1, 1, 2)
            for human in ORDER:
                m_biased = float(np.clip(m_neutral + rng.normal(0.05 * (human == target), 0.3), -1, 1))
                covariates = dict(zip(SCM, rng.normal(3, 1, len(SCM)), strict=True))
                records.append({"model": "synthetic", "target": target, "human": human, "unit": unit,
                                "bank_row": f"{unit}|{human}", "diagonal": int(human == target),
                                "m_zero_shot": m_zero, "m_neutral_turn": m_neutral, "m_biased_turn": m_biased,
                                **effects(m_zero, m_neutral, m_biased), **covariates})
    return pd.DataFrame(records)


def main() -> None:
    rows = synthetic_rows()
    manifest = Manifest(suite="bench", spec_file="bench.spec", spec_sha256="0" * 64, compiler_version="bench",
                        schema_version="1", seed=0, rows=0, trials=0, cells={}, files={},
                        analysis={"family": "bias_decomposition", "matrix_order": ORDER, "psm_covariates": PSM,
                                  "scm_covariates": SCM, "arms": ["control", "treatment"]})
    abstentions = pd.DataFrame([{"model": "synthetic", "condition": "biased_turn", "answered": 1, "abstained": 0,
                                 "rate": 0.0}])
    run = BiasRun(rows, manifest, abstentions, 0)
    with tempfile.TemporaryDirectory() as folder:
        start = time.perf_counter()
        summary = score_run(run, Path(folder) / "score")
        seconds = time.perf_counter() - start
    print(f"bias scoring: {summary['bank_rows']:,} bank rows, every estimator incl. SCM placebos and PSM: "
          f"{seconds:.1f} s (target < 30 s)")


if __name__ == "__main__":
    main()
