"""Difference-in-differences with target and human fixed effects and scenario-clustered SEs (statsmodels' OLS).

`abs` (the paper, App E): per complete bank row four observations (group, post, score) = (0,0,|m0|),
(0,1,|mn|), (1,0,|m0|), (1,1,|mb|); the estimate then equals the mean content effect.
`authors` (the released run_did): the pre score fixed at 0 and signed m_n, m_b as post scores; its ATT is
mean(m_b - m_n), not the mean content effect.

The model is `score ~ group * post + C(target) + C(human)` (a fixed effect only where it takes two values or
more), clustered by unit, fitted from its sufficient statistics (`ols_cluster_summed`, spec_audits/stats/
intervals.py: statsmodels' OLS with `cov_type="cluster"` and its small-sample correction, in numpy): the design
has one row per (group, post, target, human), at most 324, and each observation only its row's code, its
cluster and its score, so the fit holds about 30 bytes an observation (4 a bank row), where statsmodels' formula
interface held the stacked frame, the design matrix and its pseudo-inverse (about 90 MB at 43,000 bank rows).
The coefficients come from X'X instead of X's own pseudo-inverse: the same numbers to within about 2e-14, which
moves the last digits causal.csv writes (docs/cognitive-bias.md, Memory).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from spec_audits.sdk import ols_cluster_summed

Z95 = 1.959964
BLOCKS = ((0, 0), (0, 1), (1, 0), (1, 1))  # (group, post) of each block of rows, as the stacked frame had them


def did_scores(rows: pd.DataFrame, variant: str) -> np.ndarray:
    """The outcome, a block of one score per bank row for each (group, post) of BLOCKS."""
    if variant == "abs":
        zero = rows["m_zero_shot"].abs().to_numpy(float)
        pre, post = {0: zero, 1: zero}, {0: rows["m_neutral_turn"].abs().to_numpy(float),
                                         1: rows["m_biased_turn"].abs().to_numpy(float)}
    else:
        zero = (rows["m_zero_shot"] * 0.0).to_numpy(float)
        pre, post = {0: zero, 1: zero}, {0: rows["m_neutral_turn"].to_numpy(float),
                                         1: rows["m_biased_turn"].to_numpy(float)}
    return np.concatenate([(post if p else pre)[g] for g, p in BLOCKS])


def did_design(rows: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """The design's distinct rows (one per block, target and human bias, in patsy's column order for `score ~
    group * post + C(target) + C(human)`: the intercept, the treatment-coded dummies of the sorted levels but the
    first, group, post, group:post) and each observation's row among them."""
    targets, target_levels = pd.factorize(rows["target"], sort=True)
    humans, human_levels = pd.factorize(rows["human"], sort=True)
    n_target, n_human = len(target_levels), len(human_levels)
    cells = n_target * n_human
    design = np.zeros((len(BLOCKS) * cells, n_target + n_human + 2))
    design[:, 0] = 1.0
    for block, (group, post) in enumerate(BLOCKS):
        for target in range(n_target):
            for human in range(n_human):
                row = design[block * cells + target * n_human + human]
                if target:  # level 0 of each bias is the reference
                    row[target] = 1.0
                if human:
                    row[n_target - 1 + human] = 1.0
                row[-3:] = (group, post, group * post)
    combination = targets * n_human + humans
    return design, np.concatenate([block * cells + combination for block in range(len(BLOCKS))])


def did(rows: pd.DataFrame, variant: str) -> dict[str, float]:
    """The ATT (group x post), its clustered SE and 95% CI."""
    complete = rows.dropna(subset=["m_zero_shot", "m_neutral_turn", "m_biased_turn"])
    design, combinations = did_design(complete)
    clusters = np.tile(pd.factorize(complete["unit"])[0], len(BLOCKS))
    fit = ols_cluster_summed(design, combinations, clusters, np.ones(len(combinations)), did_scores(complete, variant))
    # only this coefficient's variance: with few clusters the fixed effects' clustered variances can be < 0
    att, se = float(fit.coef[-1]), math.sqrt(max(float(fit.cov[-1, -1]), 0.0))
    return {"att": att, "se": se, "ci_low": att - Z95 * se, "ci_high": att + Z95 * se, "n_rows": len(complete)}
