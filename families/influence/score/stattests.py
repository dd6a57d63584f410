"""Vectorised test statistics of methods §6.9 and §6.13 (exact binomial, two-proportion z, Wald, Wilson),
Newcombe's score interval for a difference of proportions, and the between-item intervals of logprob runs.

Every function takes numpy arrays (or scalars) of counts and accepts non-integer *expected* counts from
logprob runs: the binomial tail uses the regularised incomplete beta function, which is the exact binomial
tail at integer counts and its continuous extension in between. Degenerate inputs (no trials, zero
variance) give p = 1 instead of NaN so that zero counts and one-sided conditions stay finite.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike
from scipy import special, stats


def binomial_two_sided_half(k: ArrayLike, n: ArrayLike) -> np.ndarray:
    """Exact two-sided binomial p-value of k successes in n trials against p = 0.5.

    For p = 0.5 the distribution is symmetric, so scipy's "minlike" two-sided p-value equals
    min(1, 2 * min(P(X <= k), P(X >= k))).
    """
    k, n = np.broadcast_arrays(np.asarray(k, float), np.asarray(n, float))
    with np.errstate(invalid="ignore", divide="ignore"):
        lower = np.where(k >= n, 1.0, special.betainc(np.maximum(n - k, 1e-300), k + 1.0, 0.5))
        upper = np.where(k <= 0, 1.0, special.betainc(np.maximum(k, 1e-300), n - k + 1.0, 0.5))
    p = np.minimum(1.0, 2.0 * np.minimum(lower, upper))
    return np.where(n > 0, p, 1.0)


def normal_two_sided(z: ArrayLike) -> np.ndarray:
    """Two-sided p-value of a standard-normal statistic."""
    return 2.0 * stats.norm.sf(np.abs(np.asarray(z, float)))


def two_proportion_z(
    x1: ArrayLike, n1: ArrayLike, x2: ArrayLike, n2: ArrayLike, *, pooled: bool = True
) -> tuple[np.ndarray, np.ndarray]:
    """z and two-sided p of x1/n1 - x2/n2 (pooled SE by default, as in statsmodels' proportions_ztest)."""
    x1, n1, x2, n2 = (np.asarray(a, float) for a in (x1, n1, x2, n2))
    with np.errstate(invalid="ignore", divide="ignore"):
        p1, p2 = x1 / n1, x2 / n2
        if pooled:
            pp = (x1 + x2) / (n1 + n2)
            var = pp * (1 - pp) * (1 / n1 + 1 / n2)
        else:
            var = p1 * (1 - p1) / n1 + p2 * (1 - p2) / n2
        z = (p1 - p2) / np.sqrt(var)
    defined = (n1 > 0) & (n2 > 0) & (var > 0)
    z = np.where(defined, z, 0.0)
    return z, np.where(defined, normal_two_sided(z), 1.0)


def wald(estimate: ArrayLike, variance: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    """Wald z = estimate / sqrt(variance) with its two-sided normal p-value; a zero variance (a logprob
    run whose items agree exactly) gives p = 1 for a zero estimate and p = 0 otherwise."""
    estimate, variance = np.asarray(estimate, float), np.asarray(variance, float)
    with np.errstate(invalid="ignore", divide="ignore"):
        z = np.where(variance > 0, estimate / np.sqrt(variance),
                     np.where(estimate == 0, 0.0, np.sign(estimate) * np.inf))
    z = np.where(np.isnan(variance) | np.isnan(estimate), np.nan, z)
    return z, normal_two_sided(z)


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


def t_test(estimate: ArrayLike, se: ArrayLike, df: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    """t = estimate / se and its two-sided p with `df` degrees of freedom. A zero standard error (every item
    alike) gives p = 1 for a zero estimate and p = 0 otherwise; a NaN one (fewer than two items) gives NaN."""
    estimate, se, df = (np.asarray(a, float) for a in (estimate, se, df))
    with np.errstate(invalid="ignore", divide="ignore"):
        t = np.where(se > 0, estimate / se, np.where(estimate == 0, 0.0, np.sign(estimate) * np.inf))
        p = 2 * stats.t.sf(np.abs(t), np.maximum(df, 1))
    return np.where(np.isnan(se), np.nan, t), np.where(np.isnan(se) | np.isnan(estimate), np.nan, p)
