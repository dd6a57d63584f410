"""The release's per-target-bias mixed model (δ ~ human-bias code, a random intercept per unit, REML):
on a planted data set it equals statsmodels' own fit of the release's formula and recovers the planted
slopes; what the design cannot support is absent with a reason, never a number."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
import statsmodels.formula.api as smf

from spec_audits.families.cognitive_bias.score.lmm import lmm_table

ORDER = ["Anchoring", "Framing Effect", "Loss Aversion"]
HUMANS = ["Anchoring", "Bandwagon Effect", "Framing Effect", "Loss Aversion", "Status Quo Bias"]
SLOPES = {"Anchoring": 0.04, "Framing Effect": -0.03, "Loss Aversion": 0.0}


def _planted(seed: int = 7) -> pd.DataFrame:
    """40 units per target, every human bias once per unit: δ = slope · code + unit effect + noise."""
    rng = np.random.default_rng(seed)
    rows = []
    for target, slope in SLOPES.items():
        for unit in range(40):
            intercept = rng.normal(0, 0.05)
            for code, human in enumerate(HUMANS):  # HUMANS is alphabetical: code = the release's hb_code
                rows.append({"target": target, "human": human, "unit": f"{target}|{unit}",
                             "content": slope * code + intercept + rng.normal(0, 0.05)})
    return pd.DataFrame(rows)


@pytest.mark.filterwarnings("ignore::statsmodels.tools.sm_exceptions.ConvergenceWarning")
def test_the_fit_is_statsmodels_fit_of_the_releases_formula_and_finds_the_planted_slopes() -> None:
    rows = _planted()
    table = lmm_table(rows, ORDER).set_index("target_bias")
    assert list(table.index) == ORDER and (table["note"] == "").all()
    for target, slope in SLOPES.items():
        sub = rows[rows["target"] == target].assign(
            hb_code=lambda f: pd.Categorical(f["human"]).codes.astype(float))
        direct = smf.mixedlm("content ~ hb_code", sub, groups=sub["unit"]).fit(reml=True, method="lbfgs")
        assert table.loc[target, "lmm_coef"] == pytest.approx(direct.params["hb_code"], rel=1e-9, abs=1e-12)
        assert table.loc[target, "lmm_p"] == pytest.approx(direct.pvalues["hb_code"], rel=1e-9, abs=1e-300)
        assert abs(table.loc[target, "lmm_coef"] - slope) < 4 * direct.bse["hb_code"]
        assert (table.loc[target, "n"], table.loc[target, "units"]) == (200, 40)
    assert table.loc["Anchoring", "lmm_p"] < 1e-6 and table.loc["Loss Aversion", "lmm_p"] > 0.001


def test_a_target_the_model_cannot_be_fitted_on_is_absent_with_its_reason() -> None:
    rows = _planted()
    few = rows[rows["target"] == "Anchoring"].head(4)
    one = rows[(rows["target"] == "Framing Effect") & (rows["human"] == "Anchoring")]
    flat = rows[rows["target"] == "Loss Aversion"].assign(content=0.0)  # the release's Confirmation Bias row
    table = lmm_table(pd.concat([few, one, flat]), [*ORDER, "Status Quo Bias"]).set_index("target_bias")
    assert table["note"].to_dict() == {"Anchoring": "fewer than 5 scored rows",
                                       "Framing Effect": "one human bias: no slope to fit",
                                       "Loss Aversion": "the content effect does not vary",
                                       "Status Quo Bias": "fewer than 5 scored rows"}
    assert table["lmm_coef"].isna().all() and table["lmm_p"].isna().all()
    assert table["n"].to_dict() == {"Anchoring": 4, "Framing Effect": 40, "Loss Aversion": 200,
                                    "Status Quo Bias": 0}


def test_rows_without_a_content_effect_are_left_out_before_fitting() -> None:
    rows = _planted()
    holed = rows.assign(content=rows["content"].where(rows.index % 10 != 0))
    table = lmm_table(holed, ORDER).set_index("target_bias")
    assert table.loc["Anchoring", "n"] == 180 and math.isfinite(table.loc["Anchoring", "lmm_coef"])
