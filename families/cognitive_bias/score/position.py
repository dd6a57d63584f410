"""Position bias of a conditional-bias run: how often the answer is the option shown first.

A reversed row (`cell.reversed`, `reverse P` in the spec) shows its options last to first, so the first
shown is the original last. With both orders in a run, a model that ignores the order picks the original
first option as often in either order; the test compares those two frequencies (two-proportion z), and
the position share is the mean of the first-shown shares of the two orders (½ for two options when the
order does not matter): spec_audits.stats.position, the statistics every family reports. Answers are
counted by meaning: `answers` maps each displayed label to the option's original index. A run whose option
lists are all shown one way (`reverse 0`, the released runs) has no position statistics, only the
first-shown share of that order.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from spec_audits.sdk import position_bias, wilson_one

ONE_ORDER = "every option list is shown in one order (reverse 0)"


COUNTS = ("n", "first", "original_first")
"""What `answers` holds per (model, target_bias, unit, condition, reversed): valid answers, those of the label shown
first, those of the original first option (load.py counts them as results.jsonl streams)."""


def item_table(answers: pd.DataFrame) -> pd.DataFrame:
    """positions.csv: per model and unit (an item: one test case of one bias, all its conditions and arms),
    answers and first-shown answers in each order and their shares."""
    if answers.empty:
        return pd.DataFrame(columns=["model", "target_bias", "unit", "reversed", "n", "first", "share"])
    table = answers.groupby(["model", "target_bias", "unit", "reversed"], dropna=False, sort=True).agg(
        n=("n", "sum"), first=("first", "sum")).reset_index()
    table["share"] = table["first"] / table["n"]
    return table


def summary(answers: pd.DataFrame, alpha: float = 0.05) -> dict[str, Any]:
    """Per model, per condition and over all conditions: the first-shown share in each order, the
    position share and the test of the order effect."""
    found: dict[str, Any] = {}
    for model, rows in answers.groupby("model", sort=True):
        groups = {str(c): g for c, g in rows.groupby("condition", sort=True)} | {"all": rows}
        found[str(model)] = {name: _arm(group, alpha) for name, group in groups.items()}
    return found


def _arm(rows: pd.DataFrame, alpha: float) -> dict[str, Any]:
    orders = {o: rows[rows["reversed"] == o] for o in (0, 1)}
    shares = {f"reversed_{o}": _share(g, alpha) for o, g in orders.items()}
    if any(g.empty for g in orders.values()):
        return shares | {"position": None, "p": None, "absent": ONE_ORDER}
    n = [np.array([float(g["n"].sum())]) for g in orders.values()]
    first = [np.array([float(g["first"].sum())]) for g in orders.values()]
    same = np.array([float(orders[1]["original_first"].sum())])
    found = position_bias(first[0], n[0], first[1], n[1], alpha, same_b=same)
    p = float(found["p"][0])
    return shares | {"position": float(found["position"][0]), "p": None if np.isnan(p) else p}


def _share(rows: pd.DataFrame, alpha: float) -> dict[str, Any]:
    n, k = int(rows["n"].sum()), int(rows["first"].sum())
    if n == 0:
        return {"k": 0, "n": 0, "share": None, "ci": None}
    return {"k": k, "n": n, "share": k / n, "ci": list(wilson_one(k, n, alpha) or ())}
