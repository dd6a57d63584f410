"""Least squares with errors clustered by scenario, and the per-level contrasts built on it.

`ols_cluster` is statsmodels' OLS with `cov_type="cluster"` (its default small-sample correction,
G/(G-1) x (N-1)/(N-K)), computed in numpy so a million rows fit in well under a second;
tests/families/effects cross-check both against statsmodels.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import stats

EPS = 1e-6  # logit P is taken of P clipped to [EPS, 1 - EPS] (a logprob run's P can round to 0 or 1)


@dataclass(frozen=True)
class Fit:
    coef: np.ndarray
    cov: np.ndarray
    groups: int  # clusters: the degrees of freedom of the t intervals are groups - 1

    def se(self) -> np.ndarray:
        return np.sqrt(np.clip(np.diag(self.cov), 0, None))


def ols_cluster(x: np.ndarray, y: np.ndarray, clusters: np.ndarray, counts: np.ndarray | None = None) -> Fit:
    """OLS of y on the columns of x, with the cluster-robust sandwich covariance; clusters are codes 0..G-1.

    With `counts`, each row of x stands for `counts` observations that share its regressors and cluster, and
    y holds their sum: the fit is exactly the one of the observations themselves (the normal equations and
    the per-cluster score sums only ever add them up), from a table as small as the design's cells."""
    n = np.ones(len(y)) if counts is None else counts
    xtx_inv = np.linalg.pinv(x.T @ (x * n[:, None]))
    coef = xtx_inv @ (x.T @ y)
    residual = y - n * (x @ coef)
    groups = int(clusters.max()) + 1 if len(clusters) else 0
    summed = np.column_stack([np.bincount(clusters, x[:, j] * residual, groups) for j in range(x.shape[1])])
    return _sandwich(coef, xtx_inv, summed, int(round(n.sum())), groups)


def _sandwich(coef: np.ndarray, xtx_inv: np.ndarray, summed: np.ndarray, n: int, groups: int) -> Fit:
    """The clustered covariance from the per-cluster sums of the scores x_i * residual_i."""
    k = len(coef)
    correction = groups / (groups - 1) * (n - 1) / (n - k) if groups > 1 and n > k else np.nan
    return Fit(coef, correction * xtx_inv @ (summed.T @ summed) @ xtx_inv, groups)


def interval(estimate: float, se: float, df: int, alpha: float) -> tuple[float, float, float]:
    """(low, high, two-sided p) from a t distribution with df degrees of freedom (the normal when df < 1)."""
    q = stats.t.ppf(1 - alpha / 2, df) if df >= 1 else stats.norm.ppf(1 - alpha / 2)
    if not np.isfinite(se) or se <= 0:
        return np.nan, np.nan, np.nan
    t = estimate / se
    p = 2 * (stats.t.sf(abs(t), df) if df >= 1 else stats.norm.sf(abs(t)))
    return estimate - q * se, estimate + q * se, float(p)


def logit(p: np.ndarray | float) -> Any:
    clipped = np.clip(p, EPS, 1 - EPS)
    return np.log(clipped / (1 - clipped))


def contrast(y: np.ndarray, at_level: np.ndarray, clusters: np.ndarray, alpha: float,
             probability: bool) -> dict[str, Any]:
    """Mean at the level minus mean at the reference (rows of either, at_level says which), with a
    cluster-robust interval; for a probability also the shift in logit by the delta method. `clusters` are
    integer codes. The OLS of y on [1, at_level] is solved from per-cluster counts and sums, so a contrast
    costs two bincounts whatever the number of rows."""
    present = np.bincount(clusters) > 0
    codes = (np.cumsum(present) - 1)[clusters]  # the clusters present, numbered 0..G-1
    groups = int(present.sum())
    level = at_level.astype(float)
    n1 = np.bincount(codes, level, groups)
    n0 = np.bincount(codes, 1 - level, groups)
    s1 = np.bincount(codes, y * level, groups)
    s0 = np.bincount(codes, y * (1 - level), groups)
    ref, mean = s0.sum() / n0.sum(), s1.sum() / n1.sum()
    coef = np.array([ref, mean - ref])
    xtx_inv = np.linalg.inv(np.array([[n0.sum() + n1.sum(), n1.sum()], [n1.sum(), n1.sum()]]))
    at_ref, at_lvl = s0 - ref * n0, s1 - mean * n1  # per cluster: the residuals summed at the reference, the level
    fit = _sandwich(coef, xtx_inv, np.column_stack([at_ref + at_lvl, at_lvl]), len(y), groups)
    shift = float(coef[1])
    df = groups - 1
    low, high, p = interval(shift, float(fit.se()[1]), df, alpha)
    out: dict[str, Any] = {"n": int(n1.sum()), "n_ref": int(n0.sum()), "clusters": groups, "mean_ref": float(ref),
                           "mean": float(mean), "shift": shift, "low": low, "high": high, "p": p}
    if probability:
        out.update(_logit_shift(float(ref), shift, fit, df, alpha))
    return out


def _logit_shift(ref: float, shift: float, fit: Fit, df: int, alpha: float) -> dict[str, Any]:
    level = ref + shift
    if min(ref, level) <= 0 or max(ref, level) >= 1:
        return {"logit_shift": None, "logit_low": None, "logit_high": None,
                "absent": "a mean of 0 or 1 at the level or the reference: its logit is infinite"}
    d_level = 1 / (level * (1 - level))
    grad = np.array([d_level - 1 / (ref * (1 - ref)), d_level])
    estimate = float(logit(level) - logit(ref))
    low, high, _ = interval(estimate, float(np.sqrt(max(grad @ fit.cov @ grad, 0.0))), df, alpha)
    return {"logit_shift": estimate, "logit_low": low, "logit_high": high}
