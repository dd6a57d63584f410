"""Paired differences between models scored on the same suite, with intervals clustered by scenario.

A statistic that is a difference of two arms' mean answers, theta = mean(level) - mean(reference), is
represented by its estimate and its per-cluster influence

    psi_g = sum over answers i of cluster g of  [level_i (y_i - mean_level) / n_level
                                                 - reference_i (y_i - mean_reference) / n_reference],

whose clustered variance G / (G - 1) * sum_g psi_g^2 is the cluster-robust (CR1) variance of the contrast.
Two models answered the same scenarios, so the difference of their statistics has the influence
psi_A - psi_B on the same clusters: its variance keeps the covariance the shared scenarios induce (the
pairing), where two separate intervals would ignore it. The interval and test are t with G - 1 degrees of
freedom; BH-FDR runs across every comparison of the family.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from spec_audits.stats.hypothesis import t_test
from spec_audits.stats.intervals import t_interval
from spec_audits.stats.multiple import bh_adjust


@dataclass(frozen=True)
class Estimate:
    """A statistic's value and its influence per cluster (indexed by cluster code; 0 where absent)."""

    value: float
    psi: np.ndarray
    present: np.ndarray  # bool per cluster code: the cluster holds answers of this statistic


def contrast_influence(y: np.ndarray, at_level: np.ndarray, at_ref: np.ndarray, clusters: np.ndarray,
                       groups: int | None = None) -> Estimate:
    """mean(y at the level) - mean(y at the reference) and its per-cluster influence; `clusters` are integer
    codes below `groups` (default: the largest code + 1), shared by every model that is compared."""
    size = int(clusters.max()) + 1 if groups is None else groups
    level, ref = at_level.astype(float), at_ref.astype(float)
    n1, n0 = level.sum(), ref.sum()
    if n1 == 0 or n0 == 0:
        return Estimate(math.nan, np.zeros(size), np.zeros(size, dtype=bool))
    mean1, mean0 = float(y @ level / n1), float(y @ ref / n0)
    per_answer = level * (y - mean1) / n1 - ref * (y - mean0) / n0
    psi = np.bincount(clusters, per_answer, size)
    present = np.bincount(clusters, level + ref, size) > 0
    return Estimate(mean1 - mean0, psi, present)


def mean_influence(y: np.ndarray, clusters: np.ndarray, groups: int) -> Estimate:
    """mean(y) and its per-cluster influence sum over answers of g of (y_i - mean) / n: a one-arm statistic
    (an accuracy, the mean of per-row differences), whose paired difference is the paired t test's."""
    if len(y) == 0:
        return Estimate(math.nan, np.zeros(groups), np.zeros(groups, dtype=bool))
    mean = float(y.mean())
    return Estimate(mean, np.bincount(clusters, (y - mean) / len(y), groups),
                    np.bincount(clusters, minlength=groups) > 0)


def clustered_se(psi: np.ndarray, groups: int | None = None) -> float:
    """sqrt(G / (G - 1) * sum psi_g^2): the CR1 standard error over G clusters (default: every entry)."""
    g = len(psi) if groups is None else groups
    return math.sqrt(g / (g - 1) * float(psi @ psi)) if g > 1 else math.nan


def paired_difference(a: Estimate, b: Estimate, alpha: float) -> dict[str, Any]:
    """A - B with its paired, scenario-clustered interval and two-sided t test (G - 1 df)."""
    groups = int((a.present | b.present).sum())
    diff, se = a.value - b.value, clustered_se(a.psi - b.psi, groups)
    out: dict[str, Any] = {"difference": diff, "se": se, "clusters": groups}
    if not (math.isfinite(diff) and math.isfinite(se) and se > 0):
        return {**out, "low": None, "high": None, "p": None}
    low, high = t_interval(diff, se, groups - 1, alpha, bounds=(-math.inf, math.inf))
    _, p = t_test(diff, se, groups - 1)
    return {**out, "low": float(low), "high": float(high), "p": float(p)}


def compare_models(estimates: dict[str, dict[str, Estimate]], alpha: float) -> list[dict[str, Any]]:
    """Every pair of models on every statistic they share (estimates: model -> statistic -> Estimate),
    BH q-values across all of these comparisons; `tied` when the difference is not significant (None when
    it could not be tested)."""
    rows = []
    for first, second in itertools.combinations(estimates, 2):
        for name in (s for s in estimates[first] if s in estimates[second]):
            found = paired_difference(estimates[first][name], estimates[second][name], alpha)
            rows.append({"statistic": name, "model_a": first, "model_b": second, **found})
    tested = [row for row in rows if row["p"] is not None]
    for row, q in zip(tested, bh_adjust(np.array([row["p"] for row in tested])), strict=True):
        row["q"], row["significant"] = float(q), bool(q <= alpha)
    for row in rows:
        row.setdefault("q", None)
        row["tied"] = None if row["p"] is None else not row["significant"]
    return rows


def ties(rows: list[dict[str, Any]]) -> dict[str, list[list[str]]]:
    """Per statistic, the pairs of models whose difference is not significant after BH."""
    found: dict[str, list[list[str]]] = {}
    for row in rows:
        if row["tied"] is True:
            found.setdefault(row["statistic"], []).append([row["model_a"], row["model_b"]])
    return found
