"""The per-level contrasts of an effects design: least squares with errors clustered by scenario
(spec_audits.stats.intervals), solved from per-cluster sums; tests/families/effects cross-check them against
statsmodels.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy import stats

from spec_audits.sdk import Fit, sandwich

EPS = 1e-6  # logit P is taken of P clipped to [EPS, 1 - EPS] (a logprob run's P can round to 0 or 1)
ROUNDING = 1e-12  # a shift or standard error this small against the means is zero to rounding
ONE_SCENARIO = "one scenario: an interval over scenarios needs two or more"
SAME_SHIFT = "every scenario gives the same shift (zero variance between scenarios): no interval"


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
    fit = sandwich(coef, xtx_inv, np.column_stack([at_ref + at_lvl, at_lvl]), len(y), groups)
    df = groups - 1
    tested = _tested(float(coef[1]), float(fit.se()[1]), groups, alpha, max(1.0, abs(ref), abs(mean)))
    out: dict[str, Any] = {"n": int(n1.sum()), "n_ref": int(n0.sum()), "clusters": groups, "mean_ref": float(ref),
                           "mean": float(mean), **tested}
    if probability:
        out.update(_logit_shift(float(ref), float(coef[1]), fit, df, alpha))
    return out


def _tested(shift: float, se: float, groups: int, alpha: float, scale: float) -> dict[str, Any]:
    """The shift with its interval and p, or their absence with the reason (tested)."""
    if groups < 2:
        zero = abs(shift) <= ROUNDING * scale
        return {"shift": 0.0 if zero else shift, "low": None, "high": None, "p": 1.0 if zero else None,
                "interval_absent": ONE_SCENARIO}
    found = tested(shift, se, groups - 1, alpha, scale)
    return {"shift": found.pop("estimate"), **found}


def tested(estimate: float, se: float, df: int, alpha: float, scale: float) -> dict[str, Any]:
    """An estimate with its interval and p, or their absence with the reason. An estimate zero to rounding (a
    logprob run's 1e-16, against `scale`, the size of the means) is 0 with p = 1 exactly, never a t of rounding
    noise over rounding noise; a zero standard error has no interval."""
    tiny = ROUNDING * scale
    estimate = 0.0 if abs(estimate) <= tiny else estimate
    if not np.isfinite(se) or se <= tiny:
        reason = SAME_SHIFT + (", and p = 1 for a zero shift" if estimate == 0 else "")
        return {"estimate": estimate, "low": None, "high": None, "p": 1.0 if estimate == 0 else None,
                "interval_absent": reason}
    low, high, p = interval(estimate, se, df, alpha)
    return {"estimate": estimate, "low": low, "high": high, "p": 1.0 if estimate == 0 else p}


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
