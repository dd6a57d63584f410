"""Mixed model of |Asym| on |baseline bias| (methods §6.14) on simulated conditions with known truth."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import statsmodels.formula.api as smf

from spec_audits.families.influence.score.regression import fit


def simulated(seed: int = 0, beta: float = 2.5) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    models, factors, influences = [f"m{i}" for i in range(6)], [f"f{i}" for i in range(5)], [f"i{i}" for i in range(7)]
    grid = pd.MultiIndex.from_product([models, factors, influences], names=["model", "factor", "influence"])
    frame = grid.to_frame(index=False)
    effects = {
        name: dict(zip(levels, rng.normal(0, 0.3, len(levels)), strict=True))
        for name, levels in (("model", models), ("factor", factors), ("influence", influences))
    }
    frame["abs_bias"] = rng.uniform(0, 0.4, len(frame))
    signed = frame["abs_bias"] * rng.choice([-1, 1], len(frame))
    frame["abs_asym"] = 0.5 + beta * frame["abs_bias"] + sum(frame[k].map(v) for k, v in effects.items())
    frame["abs_asym"] += rng.normal(0, 0.3, len(frame))
    frame["signed_bias"], frame["asym"], frame["benchmark"] = signed, frame["abs_asym"], "triage"
    return frame


def test_recovers_beta_and_matches_a_direct_statsmodels_fit() -> None:
    frame = simulated()
    result = fit(frame)
    assert result["n"] == 210
    assert result["beta_ci"][0] < 2.5 < result["beta_ci"][1]
    direct = smf.mixedlm(
        "abs_asym ~ abs_bias",
        frame,
        groups=np.zeros(len(frame)),
        re_formula="0",
        vc_formula={c: f"0 + C({c})" for c in ("model", "factor", "influence")},
    ).fit(reml=True)
    assert result["beta"] == pytest.approx(direct.fe_params["abs_bias"], rel=1e-6)
    var_fixed = np.var(direct.fe_params["abs_bias"] * frame["abs_bias"])
    total = var_fixed + direct.vcomp.sum() + direct.scale
    assert result["r2_marginal"] == pytest.approx(var_fixed / total, rel=1e-6)
    assert result["r2_marginal"] < result["r2_conditional"] < 1


def test_too_few_conditions_report_an_error_not_a_crash() -> None:
    result = fit(simulated().head(3))
    assert "error" in result and result["n"] == 3
