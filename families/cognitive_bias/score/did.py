"""Difference-in-differences with target and human fixed effects and scenario-clustered SEs (statsmodels).

`abs` (the paper, App E): per complete bank row four observations (group, post, score) = (0,0,|m0|),
(0,1,|mn|), (1,0,|m0|), (1,1,|mb|); the estimate then equals the mean content effect.
`authors` (the released run_did): the pre score fixed at 0 and signed m_n, m_b as post scores; its ATT is
mean(m_b - m_n), not the mean content effect.
"""

from __future__ import annotations

import math

import pandas as pd
import statsmodels.formula.api as smf

Z95 = 1.959964


def did_frame(rows: pd.DataFrame, variant: str) -> pd.DataFrame:
    """rows: one per bank row with m_zero_shot, m_neutral_turn, m_biased_turn, target, human, unit."""
    if variant == "abs":
        pre = {0: rows["m_zero_shot"].abs(), 1: rows["m_zero_shot"].abs()}
        post = {0: rows["m_neutral_turn"].abs(), 1: rows["m_biased_turn"].abs()}
    else:
        zero = rows["m_zero_shot"] * 0.0
        pre, post = {0: zero, 1: zero}, {0: rows["m_neutral_turn"], 1: rows["m_biased_turn"]}
    parts = [rows[["target", "human", "unit"]].assign(group=g, post=p, score=(post if p else pre)[g].to_numpy())
             for g in (0, 1) for p in (0, 1)]
    return pd.concat(parts, ignore_index=True)


def did(rows: pd.DataFrame, variant: str) -> dict[str, float]:
    """The ATT (group x post), its clustered SE and 95% CI."""
    frame = did_frame(rows.dropna(subset=["m_zero_shot", "m_neutral_turn", "m_biased_turn"]), variant)
    fixed = " + C(target)" * (frame["target"].nunique() > 1) + " + C(human)" * (frame["human"].nunique() > 1)
    groups = pd.factorize(frame["unit"])[0]
    fit = smf.ols(f"score ~ group * post{fixed}", data=frame).fit(cov_type="cluster", cov_kwds={"groups": groups})
    # only this coefficient's variance: with few clusters the fixed effects' clustered variances can be < 0
    variance = float(fit.cov_params().loc["group:post", "group:post"])
    att, se = float(fit.params["group:post"]), math.sqrt(max(variance, 0.0))
    return {"att": att, "se": se, "ci_low": att - Z95 * se, "ci_high": att + Z95 * se, "n_rows": len(frame) // 4}
