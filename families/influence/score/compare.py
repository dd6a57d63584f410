"""Paired comparisons of the models of one influence study: for both effects of every condition (toward A:
P(A | toward A) - P(A | baseline); toward B likewise), each pair of models' difference with an interval
clustered by prompt and paired by the prompts both answered, BH-FDR across all of them
(spec_audits/stats/paired.py) -> comparisons.csv and summary.json's `comparisons`."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from spec_audits.sdk import Estimate, compare_models, contrast_influence, ties

IDENTITY = ("model", "reasoning")  # what tells the runs of a study apart; the other keys name a condition


def spread_answers(trials: pd.DataFrame, source: str) -> pd.DataFrame:
    """One row per answer (a sampled prompt's choices spread out; a logprob prompt's expected choice as one
    answer) with the prompt's columns and y: 1 when group A was chosen."""
    total = (trials["w_A"] + trials["w_B"]).to_numpy(float)
    if source == "expected":
        return trials.assign(y=trials["w_A"].to_numpy(float) / total.clip(min=1e-12)).reset_index(drop=True)
    counts = np.rint(trials[["w_A", "w_B"]].to_numpy(float)).astype(np.int64)
    spread = trials.loc[trials.index.repeat(counts.sum(axis=1))].reset_index(drop=True)
    spread["y"] = np.concatenate([np.repeat([1.0, 0.0], pair) for pair in counts]) if len(counts) else []
    return spread


def effect_arms(answers: pd.DataFrame, factor: str, influence: str, side: str) -> tuple[np.ndarray, np.ndarray]:
    """Which answers are in the effect's directed arm, and which in its baseline (the factor's shared
    baseline, or the influence's own)."""
    own = (answers["factor"] == factor).to_numpy()
    condition, named = answers["condition"].to_numpy(), answers["influence"]
    arm = own & (condition == f"toward_{side}") & (named == influence).to_numpy()
    base = own & (condition == "baseline") & (named.isna() | (named == influence)).to_numpy()
    return arm, base


def model_comparisons(trials: pd.DataFrame, keys: list[str], source: str, alpha: float) -> dict[str, Any] | None:
    """Every pair of the study's models on both effects of every condition; the rows and the ties. None when
    the runs are of one model (several benchmarks of it: nothing to pair)."""
    identity = [k for k in keys if k in IDENTITY]
    if len(trials[identity].drop_duplicates()) < 2:
        return None
    answers = spread_answers(trials, source)
    named = [k for k in keys if k not in IDENTITY and k not in ("factor", "influence")]
    codes = np.unique(answers["item_id"].to_numpy(), return_inverse=True)[1].astype(np.int64)
    groups = int(codes.max()) + 1 if len(codes) else 0
    directed = answers[answers["condition"] != "baseline"][[*named, "factor", "influence"]].drop_duplicates()
    estimates: dict[str, dict[str, Estimate]] = {}
    for who, own in answers.groupby(identity, sort=False):
        name = "/".join(str(part) for part in (who if isinstance(who, tuple) else (who,)) if part != "none")
        y, clusters = own["y"].to_numpy(float), codes[own.index.to_numpy()]
        for condition in directed.itertuples(index=False):
            where = dict(zip([*named, "factor", "influence"], condition, strict=True))
            same = np.logical_and.reduce([(own[k] == where[k]).to_numpy() for k in named]) if named else \
                np.ones(len(own), dtype=bool)
            label = " ".join(str(where[k]) for k in named) + f" {where['factor']} / {where['influence']}"
            for side in "AB":
                arm, base = effect_arms(own, str(where["factor"]), str(where["influence"]), side)
                value = y if side == "A" else 1 - y
                estimates.setdefault(name, {})[f"effect toward {side}: {label.strip()}"] = \
                    contrast_influence(value, arm & same, base & same, clusters, groups)
    rows = compare_models(estimates, alpha)
    return {"alpha": alpha, "rows": rows, "ties": ties(rows)}
