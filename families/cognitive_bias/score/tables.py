"""Table 1 of the paper, the 9x9 cells in the released per-cell schema, and the diagonal test.

The unit of every test is the scored bank row. Cells: n, mean, sd (ddof 1), one-sample t and p, Cohen's
d = mean / (sd + 1e-9), Bonferroni min(1, p * m) over the m cells with a p-value (n < 2 gives NaN).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

EFFECTS = ("presence", "content", "total")
LEVELS = ("abs_zero_shot", "abs_neutral_turn", "abs_biased_turn")
CELL_COLUMNS = ["target_bias", "human_bias", "n", "mean_delta", "std_delta", "t_stat", "p_value", "cohens_d",
                "significant_05", "p_bonferroni", "significant_bonferroni"]


def stars(p: float) -> str:
    if math.isnan(p):
        return ""
    return "***" if p < 0.001 else "**" if p < 0.01 else "*" if p < 0.05 else ""


def one_sample(values: pd.Series) -> dict[str, Any]:
    """n, mean, sd, two-sided one-sample t-test against 0, with its 95% CI."""
    x = values.dropna().to_numpy(dtype=float)
    n = len(x)
    mean = float(x.mean()) if n else math.nan
    sd = float(x.std(ddof=1)) if n > 1 else math.nan
    if n < 2 or sd == 0:
        return {"n": n, "mean": mean, "sd": sd, "t": math.nan, "p": math.nan, "ci_low": math.nan,
                "ci_high": math.nan}
    test = stats.ttest_1samp(x, 0.0)
    half = float(stats.t.ppf(0.975, n - 1)) * sd / math.sqrt(n)
    return {"n": n, "mean": mean, "sd": sd, "t": float(test.statistic), "p": float(test.pvalue),
            "ci_low": mean - half, "ci_high": mean + half}


def table1(rows: pd.DataFrame) -> pd.DataFrame:
    """Per model: mean |m| per condition, then the three effects with t-tests, stars and the shares of
    rows where the effect suppresses (< 0) or amplifies (> 0) the bias."""
    out = []
    for model, group in rows.groupby("model", sort=True):
        for name in LEVELS:
            values = group[name].dropna()
            out.append({"model": model, "quantity": name, "n": len(values), "mean": values.mean(),
                        "sd": values.std(ddof=1)})
        for name in EFFECTS:
            test = one_sample(group[name])
            values = group[name].dropna()
            shares = {"suppressed": float((values < 0).mean()) if len(values) else math.nan,
                      "amplified": float((values > 0).mean()) if len(values) else math.nan}
            out.append({"model": model, "quantity": name, **test, "stars": stars(test["p"]), **shares})
    return pd.DataFrame(out)


def cells(rows: pd.DataFrame, effect: str, order: list[str]) -> pd.DataFrame:
    """The released per-cell table of one effect (one model's rows), target x human in matrix order."""
    out = []
    for target in order:
        for human in order:
            values = rows.loc[(rows["target"] == target) & (rows["human"] == human), effect].dropna()
            if values.empty:
                continue
            test = one_sample(values)
            d = test["mean"] / (test["sd"] + 1e-9) if test["n"] > 1 else math.nan
            out.append({"target_bias": target, "human_bias": human, "n": test["n"], "mean_delta": test["mean"],
                        "std_delta": test["sd"], "t_stat": test["t"], "p_value": test["p"], "cohens_d": d})
    frame = pd.DataFrame(out, columns=CELL_COLUMNS[:8])
    tested = int(frame["p_value"].notna().sum())
    frame["significant_05"] = frame["p_value"] < 0.05
    frame["p_bonferroni"] = (frame["p_value"] * tested).clip(upper=1.0)
    frame["significant_bonferroni"] = frame["p_bonferroni"] < 0.05
    return frame[CELL_COLUMNS]


def matrix(cell_table: pd.DataFrame, order: list[str]) -> np.ndarray:
    """The 9x9 means (NaN where a cell has no row), rows = target bias, columns = human bias."""
    grid = np.full((len(order), len(order)), np.nan)
    for _, cell in cell_table.iterrows():
        grid[order.index(cell["target_bias"]), order.index(cell["human_bias"])] = cell["mean_delta"]
    return grid


def diagonal_test(rows: pd.DataFrame) -> dict[str, Any]:
    """On- vs off-diagonal content effects: Student t, d = Δmean / sqrt((s1² + s2²) / 2)."""
    on = rows.loc[rows["diagonal"] == 1, "content"].dropna().to_numpy(dtype=float)
    off = rows.loc[rows["diagonal"] == 0, "content"].dropna().to_numpy(dtype=float)
    out: dict[str, Any] = {"n_diagonal": len(on), "n_off": len(off),
                           "mean_diagonal": float(on.mean()) if len(on) else math.nan,
                           "mean_off": float(off.mean()) if len(off) else math.nan}
    if len(on) < 2 or len(off) < 2:
        return out | {"t": math.nan, "p": math.nan, "d": math.nan}
    test = stats.ttest_ind(on, off, equal_var=True)
    pooled = math.sqrt((on.var(ddof=1) + off.var(ddof=1)) / 2)
    d = (out["mean_diagonal"] - out["mean_off"]) / pooled if pooled > 0 else math.nan
    return out | {"t": float(test.statistic), "p": float(test.pvalue), "d": d}
