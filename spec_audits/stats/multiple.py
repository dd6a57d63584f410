"""Benjamini–Hochberg step-up FDR control (methods §6.11): q-values over one set of tests, or within each
group of one (the influence family's benchmark × test family, the effects family's contrasts of a model)."""

from __future__ import annotations

import numpy as np
import pandas as pd


def bh_adjust(pvalues: np.ndarray) -> np.ndarray:
    """BH-adjusted p-values (q-values): reject at level q exactly where the adjusted value is <= q.

    q_(i) = min over j >= i of p_(j) * m / j, capped at 1 (the step-up rule as a monotone adjustment).
    NaN p-values are left out of m and stay NaN.
    """
    p = np.asarray(pvalues, float)
    out = np.full(p.shape, np.nan)
    ok = ~np.isnan(p)
    m = int(ok.sum())
    if m == 0:
        return out
    order = np.argsort(p[ok], kind="stable")
    scaled = p[ok][order] * m / np.arange(1, m + 1)
    adjusted = np.minimum(1.0, np.minimum.accumulate(scaled[::-1])[::-1])
    ranked = np.empty(m)
    ranked[order] = adjusted
    out[ok] = ranked
    return out


def bh_within(pvalues: pd.Series, groups: pd.Series | list[pd.Series]) -> pd.Series:
    """BH-adjust `pvalues` separately inside each group (e.g. each benchmark of one test family)."""
    return pvalues.groupby(groups, sort=False, dropna=False).transform(
        lambda s: pd.Series(bh_adjust(s.to_numpy()), s.index)
    )
