"""Paired comparisons of the models of one puzzle-solving study: each puzzle family and band's exact-match
accuracy, each pair of models' difference with an interval clustered by puzzle and paired by the puzzles
both answered (a puzzle's samples share its wording), BH-FDR across all of them
(spec_audits/stats/paired.py) -> comparisons.csv and summary.json's `comparisons`."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from spec_audits.sdk import SOLVED, Estimate, compare_models, mean_influence, ties


def statistic_name(family: object, band: object) -> str:
    """How plans and comparisons name a band's accuracy, e.g. `exact-match accuracy: zebra easy`."""
    return f"exact-match accuracy: {family} {band}"


def model_comparisons(table: pd.DataFrame, alpha: float) -> dict[str, Any]:
    """Every pair of models on every band they share (solved_table's answered lines); rows and ties."""
    answered = table[~table["failed"] & table["outcome"].notna()]
    codes = {item: code for code, item in enumerate(sorted(answered["item_id"].astype(str).unique()))}
    estimates: dict[str, dict[str, Estimate]] = {}
    for (model, family, band), rows in answered.groupby(["model", "family", "band"], sort=True):
        clusters = rows["item_id"].astype(str).map(codes).to_numpy(np.int64)
        estimates.setdefault(str(model), {})[statistic_name(family, band)] = \
            mean_influence((rows["outcome"] == SOLVED).to_numpy(float), clusters, len(codes))
    rows_out = compare_models(estimates, alpha)
    return {"alpha": alpha, "rows": rows_out, "ties": ties(rows_out)}
