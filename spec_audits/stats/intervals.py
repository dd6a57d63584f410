"""Intervals every family and the runner share (docs/scoring.md, "The shared statistics and the rows they need"):
Wilson's for a proportion, Newcombe's for a difference of two, the between-item interval of a logprob run's
share, and least squares with errors clustered by scenario.

Every function takes numpy arrays (or scalars) and accepts non-integer *expected* counts from logprob runs.
tests/stats cross-check each against statsmodels or scipy.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike
from scipy import stats


def wilson(k: ArrayLike, n: ArrayLike, alpha: float = 0.05) -> tuple[np.ndarray, np.ndarray]:
    """Wilson score interval for k/n (the interval of statsmodels' proportion_confint(method="wilson"))."""
    k, n = np.broadcast_arrays(np.asarray(k, float), np.asarray(n, float))
    z = stats.norm.isf(alpha / 2)
    with np.errstate(invalid="ignore", divide="ignore"):
        p = k / n
        denom = 1 + z**2 / n
        centre = (p + z**2 / (2 * n)) / denom
        half = z * np.sqrt(p * (1 - p) / n + z**2 / (4 * n**2)) / denom
        # the exact interval contains p and lies in [0, 1]; rounding can leave it 1e-17 outside either
        lo, hi = np.clip(np.minimum(centre - half, p), 0, 1), np.clip(np.maximum(centre + half, p), 0, 1)
    return np.where(n > 0, lo, 0.0), np.where(n > 0, hi, 1.0)


def newcombe(x1: ArrayLike, n1: ArrayLike, x2: ArrayLike, n2: ArrayLike,
             alpha: float = 0.05) -> tuple[np.ndarray, np.ndarray]:
    """Newcombe's hybrid score interval (his method 10) for x1/n1 − x2/n2, from the two Wilson intervals:
    statsmodels' confint_proportions_2indep(method="newcomb"). It keeps its width at 0 and 1, where the Wald
    interval collapses to a point. NaN where either n is 0."""
    x1, n1, x2, n2 = (np.asarray(a, float) for a in (x1, n1, x2, n2))
    l1, u1 = wilson(x1, n1, alpha)
    l2, u2 = wilson(x2, n2, alpha)
    with np.errstate(invalid="ignore", divide="ignore"):
        p1, p2 = x1 / n1, x2 / n2
        low = p1 - p2 - np.sqrt((p1 - l1) ** 2 + (u2 - p2) ** 2)
        high = p1 - p2 + np.sqrt((u1 - p1) ** 2 + (p2 - l2) ** 2)
    defined = (n1 > 0) & (n2 > 0)
    return np.where(defined, low, np.nan), np.where(defined, high, np.nan)


def item_mean(total: ArrayLike, sum_w: ArrayLike, sum_w2: ArrayLike, sum_wm: ArrayLike, sum_m2: ArrayLike,
              items: ArrayLike) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A logprob run's share and its standard error from the variation between its items.

    Item i stands for m_i samples of which it expects w_i = m_i·P_i; the share is Σw / Σm (`sum_w` over
    `total`) and its variance the ratio estimator's, k/(k−1) · Σ(w_i − share·m_i)² / (Σm)², written with
    the sums Σw², Σw·m, Σm² so that it can be pooled like counts. Returns (share, standard error, degrees
    of freedom k − 1); the error is NaN for fewer than two items."""
    total, w, w2, wm, m2, k = (np.asarray(a, float) for a in (total, sum_w, sum_w2, sum_wm, sum_m2, items))
    with np.errstate(invalid="ignore", divide="ignore"):
        share = w / total
        spread = np.maximum(w2 - 2 * share * wm + share**2 * m2, 0.0)
        se = np.sqrt(k / (k - 1) * spread) / total
    return np.where(total > 0, share, np.nan), np.where(k >= 2, se, np.nan), k - 1


def t_interval(estimate: ArrayLike, se: ArrayLike, df: ArrayLike, alpha: float = 0.05,
               bounds: tuple[float, float] = (0.0, 1.0)) -> tuple[np.ndarray, np.ndarray]:
    """estimate ± t(1 − α/2, df)·se, clipped to `bounds`; NaN where se is NaN (fewer than two items)."""
    estimate, se, df = (np.asarray(a, float) for a in (estimate, se, df))
    with np.errstate(invalid="ignore"):
        half = stats.t.isf(alpha / 2, np.maximum(df, 1)) * se
    return np.clip(estimate - half, *bounds), np.clip(estimate + half, *bounds)


def welch_df(se1: ArrayLike, df1: ArrayLike, se2: ArrayLike, df2: ArrayLike) -> np.ndarray:
    """Welch–Satterthwaite degrees of freedom of a difference of two independent means."""
    v1, v2 = np.asarray(se1, float) ** 2, np.asarray(se2, float) ** 2
    with np.errstate(invalid="ignore", divide="ignore"):
        df = (v1 + v2) ** 2 / (v1**2 / np.asarray(df1, float) + v2**2 / np.asarray(df2, float))
    return np.where(np.isfinite(df), df, np.maximum(np.minimum(df1, df2), 1))

def wilson_one(k: float, n: float, alpha: float = 0.05) -> tuple[float, float] | None:
    """One proportion's Wilson interval as two floats, None when there are no trials."""
    if n <= 0:
        return None
    low, high = wilson(k, n, alpha)
    return float(low), float(high)


@dataclass(frozen=True)
class Fit:
    """A least-squares fit with its cluster-robust covariance."""

    coef: np.ndarray
    cov: np.ndarray
    groups: int  # clusters: the degrees of freedom of the t intervals are groups - 1

    def se(self) -> np.ndarray:
        return np.asarray(np.sqrt(np.clip(np.diag(self.cov), 0, None)), float)


def ols_cluster(x: np.ndarray, y: np.ndarray, clusters: np.ndarray, counts: np.ndarray | None = None) -> Fit:
    """OLS of y on the columns of x, with the cluster-robust sandwich covariance; clusters are codes 0..G-1.
    It is statsmodels' OLS with `cov_type="cluster"` (its default small-sample correction,
    G/(G-1) x (N-1)/(N-K)), computed in numpy so a million rows fit in well under a second.

    With `counts`, each row of x stands for `counts` observations that share its regressors and cluster, and
    y holds their sum: the fit is exactly the one of the observations themselves (the normal equations and
    the per-cluster score sums only ever add them up), from a table as small as the design's cells."""
    n = np.ones(len(y)) if counts is None else counts
    return ols_cluster_summed(x, np.arange(len(y)), clusters, n, y)


def ols_cluster_summed(x: np.ndarray, combinations: np.ndarray, clusters: np.ndarray, counts: np.ndarray,
                       sums: np.ndarray) -> Fit:
    """`ols_cluster` from sufficient statistics: x holds one row per distinct combination of the regressors,
    and each (cluster, combination) pair its combination's row of x, its cluster, how many observations it
    holds and the sum of their y. X'X, X'y and each cluster's score sum X_g'y_g - X_g'X_g b are sums over
    those pairs, so the memory is the pairs' and x's, never a row of regressors per observation."""
    weight = np.bincount(combinations, counts, len(x))
    xtx_inv = np.linalg.pinv(x.T @ (x * weight[:, None]))
    coef = xtx_inv @ (x.T @ np.bincount(combinations, sums, len(x)))
    residual = sums - counts * (x @ coef)[combinations]
    groups = int(clusters.max()) + 1 if len(clusters) else 0
    summed = np.column_stack([np.bincount(clusters, x[combinations, j] * residual, groups)
                              for j in range(x.shape[1])])
    return sandwich(coef, xtx_inv, summed, int(round(counts.sum())), groups)


def sandwich(coef: np.ndarray, xtx_inv: np.ndarray, summed: np.ndarray, n: int, groups: int) -> Fit:
    """The clustered covariance from the per-cluster sums of the scores x_i * residual_i."""
    k = len(coef)
    correction = groups / (groups - 1) * (n - 1) / (n - k) if groups > 1 and n > k else np.nan
    return Fit(coef, correction * xtx_inv @ (summed.T @ summed) @ xtx_inv, groups)
