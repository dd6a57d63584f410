"""Noise floor from a baseline-replicate run (methods §6.15, App. N).

The replicate re-issues the baseline prompts (same item ids) with fresh sampling. Per noise cell
(every condition key except the influence: model × factor, plus benchmark and extra keys):
  drift = |f0_rep(B) − f0_orig(B)| over the baseline items present in both runs;
  modal flip rate = share of baseline items ("edges") whose majority choice differs between the runs.
Items whose majority is a tie in either run are left out of the flip rate (the paper gives no rule).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from families.influence.score.runs import Run


def noise_floor(original: Run, replicate: Run) -> dict[str, Any]:
    """Per benchmark: mean and max |drift| (p), mean modal flip rate, and the per-cell table."""
    cell_keys = [k for k in original.keys if k != "influence"]
    orig = _baseline_items(original.trials, cell_keys)
    rep = _baseline_items(replicate.trials, [])
    joint = orig.merge(rep, on="item_id", how="inner", suffixes=("", "_rep"))
    if joint.empty:
        return {}
    mode, mode_rep = np.sign(joint["w_B"] - joint["w_A"]), np.sign(joint["w_B_rep"] - joint["w_A_rep"])
    joint["flip"] = np.where((mode != 0) & (mode_rep != 0), (mode != mode_rep).astype(float), np.nan)
    cells = (
        joint.groupby(cell_keys, dropna=False)
        .agg(
            w_A=("w_A", "sum"),
            w_B=("w_B", "sum"),
            w_A_rep=("w_A_rep", "sum"),
            w_B_rep=("w_B_rep", "sum"),
            flip_rate=("flip", "mean"),
            items=("flip", "size"),
        )
        .reset_index()
    )
    with np.errstate(invalid="ignore", divide="ignore"):
        cells["drift_pp"] = 100 * np.abs(
            cells["w_B_rep"] / (cells["w_A_rep"] + cells["w_B_rep"]) - cells["w_B"] / (cells["w_A"] + cells["w_B"])
        )
    return {
        str(benchmark): {
            "cells": len(group),
            "mean_abs_drift_pp": float(group["drift_pp"].mean()),
            "max_abs_drift_pp": float(group["drift_pp"].max()),
            "mean_flip_rate": float(group["flip_rate"].mean()),
            "per_cell": group[cell_keys + ["items", "drift_pp", "flip_rate"]].to_dict("records"),
        }
        for benchmark, group in cells.groupby("benchmark")
    }


def _baseline_items(trials: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    """Summed choice weights per baseline item, with the item's cell `keys` as columns."""
    base = trials[trials["condition"] == "baseline"]
    return base.groupby(["item_id", *keys], dropna=False)[["w_A", "w_B"]].sum().reset_index()
