"""Position bias of a conditional-bias run: how often the answer is the option shown first.

A reversed row (`cell.reversed`, `reverse P` in the spec) shows its options last to first, so the first
shown is the original last. With both orders in a run, a model that ignores the order picks the original
first option as often in either order; the test compares those two frequencies (two-proportion z), and
the position share is the mean of the first-shown shares of the two orders (½ for two options when the
order does not matter). Answers are counted by meaning: `answers` maps each displayed label to the
option's original index. A run whose option lists are all shown one way (`reverse 0`, the released runs)
has no position statistics, only the first-shown share of that order.
"""

from __future__ import annotations

import math
from typing import Any

import pandas as pd
from statsmodels.stats.proportion import proportion_confint, proportions_ztest

from spec_audits.contract.suite_model import SuiteRow

ONE_ORDER = "every option list is shown in one order (reverse 0)"


def answer_record(model: str, row: SuiteRow, answer: str | None) -> dict[str, Any]:
    """One valid answer's display facts: was it the first shown, was it the original first option."""
    first_label = "1" if "1" in row.answers else "A"
    return {"model": model, "target_bias": row.cell.get("target_bias"), "unit": row.unit,
            "condition": row.cell["condition"], "reversed": int(row.cell.get("reversed") or 0),
            "first": answer == first_label, "original_first": row.answers.get(str(answer)) == "0"}


def item_table(answers: pd.DataFrame) -> pd.DataFrame:
    """positions.csv: per model and unit (an item: one test case of one bias, all its conditions and arms),
    answers and first-shown answers in each order and their shares."""
    if answers.empty:
        return pd.DataFrame(columns=["model", "target_bias", "unit", "reversed", "n", "first", "share"])
    table = answers.groupby(["model", "target_bias", "unit", "reversed"], dropna=False, sort=True).agg(
        n=("first", "size"), first=("first", "sum")).reset_index()
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
    counts = [int(g["original_first"].sum()) for g in orders.values()]
    sizes = [len(g) for g in orders.values()]
    _, p = proportions_ztest(counts, sizes) if 0 < sum(counts) < sum(sizes) else (0.0, 1.0)
    position = (shares["reversed_0"]["share"] + shares["reversed_1"]["share"]) / 2
    return shares | {"position": position, "p": None if math.isnan(p) else float(p)}


def _share(rows: pd.DataFrame, alpha: float) -> dict[str, Any]:
    n, k = len(rows), int(rows["first"].sum())
    if n == 0:
        return {"k": 0, "n": 0, "share": None, "ci": None}
    low, high = proportion_confint(k, n, alpha, method="wilson")
    return {"k": k, "n": n, "share": k / n, "ci": [float(low), float(high)]}
