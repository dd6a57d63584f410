"""Vectorised test statistics of methods §6.9 and §6.13 (exact binomial, two-proportion z, Wald, Wilson).

Every function takes numpy arrays (or scalars) of counts and accepts non-integer *expected* counts from
logprob runs: the binomial tail uses the regularised incomplete beta function, which is the exact binomial
tail at integer counts and its continuous extension in between. Degenerate inputs (no trials, zero
variance) give p = 1 instead of NaN so that zero counts and one-sided conditions stay finite.
"""

from __future__ import annotations

import numpy as np
from scipy import special, stats

ArrayLike = np.ndarray | float


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
    """Wald z = estimate / sqrt(variance) with its two-sided normal p-value."""
    z = np.asarray(estimate, float) / np.sqrt(np.asarray(variance, float))
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
