"""Difference-in-differences with target and human fixed effects and scenario-clustered SEs (statsmodels).

`abs` (the paper, App E): per complete bank row four observations (group, post, score) = (0,0,|m0|),
(0,1,|mn|), (1,0,|m0|), (1,1,|mb|); the estimate then equals the mean content effect.
`authors` (the released run_did): the pre score fixed at 0 and signed m_n, m_b as post scores; its ATT is
mean(m_b - m_n), not the mean content effect.

The model is `score ~ group * post + C(target) + C(human)` (a fixed effect only where it takes two values or
more), its design matrix laid out as patsy lays out that formula's (the intercept, the treatment-coded dummies of
the sorted target and human levels but the first, group, post, group:post) and filled in place, a block of rows
per (group, post): the same numbers statsmodels' formula interface fitted, without patsy's copies of the
stacked frame and of the matrix (8 bytes a cell, 4 rows a bank row).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import statsmodels.api as sm

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


def did_design(rows: pd.DataFrame) -> np.ndarray:
    """The design matrix of `score ~ group * post + C(target) + C(human)`, in patsy's column order."""
    n = len(rows)
    dummies = [(rows[name].to_numpy(), level) for name in ("target", "human")
               for level in sorted(set(rows[name].to_numpy().tolist()))[1:]]
    design = np.zeros((len(BLOCKS) * n, 4 + len(dummies)), order="F")
    design[:, 0] = 1.0
    for column, (values, level) in enumerate(dummies, start=1):
        design[:, column] = np.tile(values == level, len(BLOCKS))
    for block, (group, post) in enumerate(BLOCKS):
        design[block * n:(block + 1) * n, -3:] = (group, post, group * post)
    return design


def did(rows: pd.DataFrame, variant: str) -> dict[str, float]:
    """The ATT (group x post), its clustered SE and 95% CI."""
    complete = rows.dropna(subset=["m_zero_shot", "m_neutral_turn", "m_biased_turn"])
    groups = np.tile(pd.factorize(complete["unit"])[0], len(BLOCKS))
    fit = sm.OLS(did_scores(complete, variant), did_design(complete)).fit(cov_type="cluster",
                                                                         cov_kwds={"groups": groups})
    # only this coefficient's variance: with few clusters the fixed effects' clustered variances can be < 0
    variance = float(fit.cov_params()[-1, -1])
    att, se = float(fit.params[-1]), math.sqrt(max(variance, 0.0))
    return {"att": att, "se": se, "ci_low": att - Z95 * se, "ci_high": att + Z95 * se, "n_rows": len(complete)}
