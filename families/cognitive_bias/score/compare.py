"""Paired comparisons of the models of one conditional-bias study: Table 1's Δn (presence), δ (content)
and Δb (total), each model's mean of one difference per bank row it scored; each pair of models' difference
has its variance clustered and paired by bank row (spec_audits/stats/paired.py), which is the paired t test
when both scored the same rows, BH-FDR across all of them -> comparisons.csv and summary.json's
`comparisons`."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from spec_audits.sdk import Estimate, compare_models, mean_influence, ties

NAMES = {"presence": "Δn (presence): neutral turn - zero shot", "content": "δ (content): biased turn - neutral turn",
         "total": "Δb (total): biased turn - zero shot"}
"""How plans and comparisons name Table 1's effects (rows.csv's columns)."""


def model_comparisons(rows: pd.DataFrame, alpha: float) -> dict[str, Any]:
    """Every pair of models on every effect (rows: one line per model and bank row); rows and ties."""
    keys = rows["unit"].astype(str) + "|" + rows["bank_row"].astype(str)
    codes = {key: code for code, key in enumerate(sorted(keys.unique()))}
    estimates: dict[str, dict[str, Estimate]] = {}
    for model, group in rows.assign(key=keys).groupby("model", sort=True):
        for column, name in NAMES.items():
            kept = group.dropna(subset=[column])
            clusters = kept["key"].map(codes).to_numpy(np.int64)
            estimates.setdefault(str(model), {})[name] = \
                mean_influence(kept[column].to_numpy(float), clusters, len(codes))
    found = compare_models(estimates, alpha)
    return {"alpha": alpha, "rows": found, "ties": ties(found)}
