"""score(): counts -> conditions.csv and summary.json (the whole of `spec score`)."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from spec_audits.families.influence.score import position, regression, summary
from spec_audits.families.influence.score.counts import CountsTable
from spec_audits.families.influence.score.influence import condition_statistics
from spec_audits.families.influence.score.options import Options
from spec_audits.sdk import bh_within, score_folder, write_csv, write_json

COUNT_SOURCE_TEXT = {
    "samples": "observed counts of sampled answers",
    "expected": "expected counts from answer-token probabilities (logprob run)",
}


@dataclass(frozen=True)
class Scores:
    """The scored conditions (one row per condition) and the summary dictionary written as JSON."""

    conditions: pd.DataFrame
    summary: dict[str, Any]


def add_fdr(conditions: pd.DataFrame) -> pd.DataFrame:
    """BH q-values within each benchmark and test family (baseline, effect (both directions), asymmetry)."""
    out = conditions.copy()
    bench = out["benchmark"]
    out["q_baseline"] = bh_within(out["p_baseline"], bench)
    out["q_asymmetry"] = bh_within(out["p_asymmetry"], bench)
    effects = pd.concat([out["p_effect_A"], out["p_effect_B"]], ignore_index=True)
    q = bh_within(effects, pd.concat([bench, bench], ignore_index=True)).to_numpy()
    out["q_effect_A"], out["q_effect_B"] = q[: len(out)], q[len(out) :]
    return out


def score(counts: CountsTable, options: Options | None = None, noise: dict[str, Any] | None = None,
          trials: pd.DataFrame | None = None) -> Scores:
    """Every §6 statistic per condition, BH-FDR, and the per-benchmark summary; `trials` (a run's) give
    the position statistics of every arm, a counts table only its baseline's."""
    options = options or Options()
    conditions = add_fdr(condition_statistics(counts, options))
    dirs = summary.directed(conditions, counts.keys)
    per_benchmark: dict[str, Any] = {}
    for bench, conds in conditions.groupby("benchmark", sort=True):
        d = dirs[dirs["benchmark"] == bench]
        per_benchmark[str(bench)] = {
            "headline": summary.headline(conds, d, options),
            "overall": summary.metrics(conds, d, options.alpha),
            "by": summary.breakdowns(conds, d, options.alpha),
            "regression": regression.fit(regression.design(conds)),
            "position": _position(conds, counts, options.alpha, trials, str(bench)),
            "absent": _absences(conds),
        }
        if noise and str(bench) in noise:
            floor = noise[str(bench)]
            shift = per_benchmark[str(bench)]["headline"]["mean_abs_shift"]["all"]["mean_pp"]
            per_benchmark[str(bench)]["noise_floor"] = floor | {
                "shift_to_noise": shift / floor["mean_abs_drift_pp"] if floor["mean_abs_drift_pp"] else None
            }
    result = {
        "family": "influence_pairs",
        "count_source": counts.source,
        "count_source_text": COUNT_SOURCE_TEXT[counts.source],
        "settings": asdict(options) | {"fdr": "bh within benchmark x test family", "keys": counts.keys},
        "benchmarks": per_benchmark,
    }
    if len(per_benchmark) > 1:
        result["pooled_regression"] = regression.fit(regression.design(conditions), pooled=True)
    return Scores(conditions, result)


def _position(conds: pd.DataFrame, counts: CountsTable, alpha: float, trials: pd.DataFrame | None,
              bench: str) -> dict[str, Any]:
    if trials is None:
        return position.from_counts(conds, alpha, counts.no_order)
    return position.summary(trials, (trials["benchmark"] == bench).to_numpy(), conds, counts.source, alpha,
                            counts.no_order)


def _absences(conds: pd.DataFrame) -> dict[str, int]:
    """Each reason a statistic is absent, with the number of conditions it applies to."""
    reasons = conds["absent"].astype(str).str.split("; ").explode()
    return {str(k): int(v) for k, v in reasons[reasons != ""].value_counts().sort_index().items()}


def write(scores: Scores, out_dir: Path) -> None:
    """DIR/conditions.csv (one row per condition) and DIR/summary.json, last."""
    score_folder(out_dir)
    write_csv(scores.conditions, out_dir / "conditions.csv", float_format="%.10g")
    write_json(out_dir / "summary.json", scores.summary)
