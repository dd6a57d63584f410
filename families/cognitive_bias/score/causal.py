"""Synthetic control per target bias with placebo p-values, and propensity-score matching (App E).

SCM (scipy SLSQP, as the release): the treated cell is (β, β), the donors the off-diagonal cells of row
β. Weights w >= 0, Σw = 1 minimise Σ_k ((X1k − w·X0k) / r_k)², X the cell means of the covariates and r
their range over the donors; started from uniform weights, ftol 1e-9, uniform weights if it fails. The
gap is Y1 − w·Y0 with Y the cell mean δ; p = mean(|placebo gap| >= |gap|) over each donor in turn as the
treated cell, so p is a multiple of 1 / donors. scipy rather than an SCM package: the release's exact
objective and start, in a dependency the project already has.

PSM: treatment is_diagonal, z-scored covariates, the propensity from an L2 logistic regression with
sklearn's LogisticRegression(C=1) objective (0.5·|w|² + C·Σ log-loss, intercept free), solved with scipy
L-BFGS so that no new dependency is needed; 1:1 nearest neighbour with replacement, no caliper.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd
from scipy import optimize, stats

NEAREST_CELLS = 1_000_000  # distances computed at once by the propensity matching (8 MB)


def _weights(treated: np.ndarray, donors: np.ndarray) -> np.ndarray:
    span = donors.max(axis=0) - donors.min(axis=0)
    scale = np.where(span > 0, span, 1.0)
    count = len(donors)
    start = np.full(count, 1.0 / count)

    def loss(w: np.ndarray) -> float:
        return float((((treated - w @ donors) / scale) ** 2).sum())

    fit = optimize.minimize(loss, start, method="SLSQP", bounds=[(0.0, 1.0)] * count,
                            constraints=({"type": "eq", "fun": lambda w: w.sum() - 1.0},), options={"ftol": 1e-9})
    return fit.x if fit.success else start


def _gap(y: np.ndarray, x: np.ndarray, treated: int) -> float:
    others = [i for i in range(len(y)) if i != treated]
    weights = _weights(x[treated], x[others])
    return float(y[treated] - weights @ y[others])


def scm(rows: pd.DataFrame, covariates: list[str], order: list[str]) -> pd.DataFrame:
    """Per target bias: the gap, its placebo p-value and the number of donors."""
    out = []
    for target in order:
        group = rows[rows["target"] == target].dropna(subset=["content"])
        means = group.groupby("human")[["content", *covariates]].mean().dropna()
        if target not in means.index or len(means) < 3:
            continue
        means = means.loc[[target, *[h for h in means.index if h != target]]]  # the treated cell first
        y, x = means["content"].to_numpy(), means[covariates].to_numpy(dtype=float)
        gap = _gap(y, x, 0)
        # placebos: each donor treated in turn, drawing on the other donors only
        placebos = [_gap(np.delete(y, 0), np.delete(x, 0, axis=0), i) for i in range(len(y) - 1)]
        p = float(np.mean([abs(g) >= abs(gap) for g in placebos]))
        out.append({"target_bias": target, "gap": gap, "p_placebo": p, "donors": len(y) - 1})
    return pd.DataFrame(out, columns=["target_bias", "gap", "p_placebo", "donors"])


def logistic_l2(x: np.ndarray, treated: np.ndarray, c: float = 1.0) -> tuple[np.ndarray, float]:
    """Weights and intercept of L2 logistic regression with sklearn's LogisticRegression(C=c) objective."""
    y = np.where(treated, 1.0, -1.0)

    def loss(theta: np.ndarray) -> tuple[float, np.ndarray]:
        w, b = theta[:-1], theta[-1]
        z = y * (x @ w + b)
        value = 0.5 * w @ w + c * np.logaddexp(0, -z).sum()
        sig = -y * c / (1 + np.exp(z))
        return float(value), np.append(w + x.T @ sig, sig.sum())

    fit = optimize.minimize(loss, np.zeros(x.shape[1] + 1), jac=True, method="L-BFGS-B",
                            options={"gtol": 1e-10, "ftol": 1e-15})
    return fit.x[:-1], float(fit.x[-1])


def propensity(x: np.ndarray, treated: np.ndarray) -> np.ndarray:
    w, b = logistic_l2(x, treated)
    return 1 / (1 + np.exp(-(x @ w + b)))


def smd(a: np.ndarray, b: np.ndarray) -> float:
    pooled = math.sqrt((a.var(ddof=1) + b.var(ddof=1)) / 2) if len(a) > 1 and len(b) > 1 else math.nan
    return float((a.mean() - b.mean()) / pooled) if pooled and not math.isnan(pooled) else math.nan


def nearest(pool: np.ndarray, wanted: np.ndarray) -> np.ndarray:
    """For each of `wanted`, the index in `pool` of the nearest value (the first of equals), a block of `wanted` at
    a time: the whole distance matrix is len(wanted) x len(pool) numbers, gigabytes at tens of thousands of rows."""
    step = max(1, NEAREST_CELLS // max(1, len(pool)))
    return np.concatenate([_nearest_block(pool, wanted[start:start + step])
                           for start in range(0, len(wanted), step)] or [np.zeros(0, dtype=np.intp)])


def _nearest_block(pool: np.ndarray, wanted: np.ndarray) -> np.ndarray:
    distance = pool[None, :] - wanted[:, None]
    return np.abs(distance, out=distance).argmin(axis=1)  # in place: one block of distances held, not two


def psm(rows: pd.DataFrame, covariates: list[str]) -> dict[str, Any]:
    """ATT of being on the diagonal on δ: matched (paired t) and unmatched, with SMD before and after."""
    read = list(dict.fromkeys(["content", "diagonal", *covariates]))  # a copy of only the columns it reads
    data = rows[read].dropna(subset=["content", *covariates])
    treated = data["diagonal"].to_numpy() == 1
    if treated.sum() < 2 or (~treated).sum() < 2:
        return {"n_treated": int(treated.sum()), "n_control": int((~treated).sum())}
    raw = data[covariates].to_numpy(dtype=float)
    sd = raw.std(axis=0, ddof=0)
    x = (raw - raw.mean(axis=0)) / np.where(sd > 0, sd, 1.0)
    score = propensity(x, treated)
    controls = np.flatnonzero(~treated)
    matched = controls[nearest(score[controls], score[treated])]
    delta = data["content"].to_numpy(dtype=float)
    paired = stats.ttest_rel(delta[treated], delta[matched])
    balance = {c: {"before": smd(raw[treated, i], raw[~treated, i]), "after": smd(raw[treated, i], raw[matched, i])}
               for i, c in enumerate(covariates)}
    after = [v["after"] for v in balance.values() if not math.isnan(v["after"])]
    return {"n_treated": int(treated.sum()), "n_control": int((~treated).sum()),
            "att_matched": float((delta[treated] - delta[matched]).mean()), "t_matched": float(paired.statistic),
            "p_matched": float(paired.pvalue), "att_unmatched": float(delta[treated].mean() - delta[~treated].mean()),
            "smd": balance, "balanced": all(abs(v) < 0.1 for v in after)}
