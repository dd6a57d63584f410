"""Tests every family and the runner share: the exact binomial (and McNemar's exact test and the sign test
built on it), the two-proportion z, Wald's and Student's t.

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
    return np.asarray(2.0 * stats.norm.sf(np.abs(np.asarray(z, float))), float)


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


def t_test(estimate: ArrayLike, se: ArrayLike, df: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    """t = estimate / se and its two-sided p with `df` degrees of freedom. A zero standard error (every item
    alike) gives p = 1 for a zero estimate and p = 0 otherwise; a NaN one (fewer than two items) gives NaN."""
    estimate, se, df = (np.asarray(a, float) for a in (estimate, se, df))
    with np.errstate(invalid="ignore", divide="ignore"):
        t = np.where(se > 0, estimate / se, np.where(estimate == 0, 0.0, np.sign(estimate) * np.inf))
        p = 2 * stats.t.sf(np.abs(t), np.maximum(df, 1))
    return np.where(np.isnan(se), np.nan, t), np.where(np.isnan(se) | np.isnan(estimate), np.nan, p)

def mcnemar_exact(b: int, c: int) -> float | None:
    """McNemar's exact p of b pairs that moved one way and c the other (statsmodels' mcnemar(exact=True)):
    the two-sided binomial test of b of b + c against ½. None without discordant pairs."""
    if b + c == 0:
        return None
    return float(binomial_two_sided_half(b, b + c))


def sign_test(up: int, down: int) -> float:
    """The two-sided sign test of `up` moves one way and `down` the other (ties dropped), NaN without a move."""
    return float(binomial_two_sided_half(up, up + down)) if up + down else float("nan")
