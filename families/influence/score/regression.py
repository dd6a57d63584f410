"""Mixed-effects regression of |Asym| on |baseline bias| (methods §6.14, App. O), statsmodels MixedLM.

    |Asym|_i = β0 + β1·|bias|_i + u_model(i) + u_factor(i) + u_influence(i) [+ γ_benchmark] + ε_i

Crossed random intercepts are variance components inside one all-encompassing group. "model" means
model × reasoning setting when the reasoning key exists. Factor levels are distinct per benchmark.
Marginal R² (Nakagawa–Schielzeth) = Var(β1·|bias|) / (Var(β1·|bias|) + Σσ²_u + σ²_ε): the benchmark
fixed effect of the pooled fit is *not* counted, since the paper credits "the fixed effect alone".
Conditional R² adds Σσ²_u to the numerator.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

COMPONENTS = ("model", "factor", "influence")


def design(conditions: pd.DataFrame) -> pd.DataFrame:
    """The regression frame: abs_asym, abs_bias and the grouping columns of each condition."""
    model = conditions["model"].astype(str)
    if "reasoning" in conditions.columns:
        model = model + " | " + conditions["reasoning"].astype(str)
    frame = pd.DataFrame(
        {
            "abs_asym": conditions["asymmetry"].abs(),
            "abs_bias": conditions["baseline_bias"],
            "signed_bias": conditions["f0_B"] - 0.5,
            "asym": conditions["asymmetry"],
            "benchmark": conditions["benchmark"].astype(str),
            "model": model,
            "factor": conditions["benchmark"].astype(str) + " | " + conditions["factor"].astype(str),
            "influence": conditions["influence"].astype(str),
        }
    )
    return frame.dropna(subset=["abs_asym", "abs_bias"]).reset_index(drop=True)


def fit(frame: pd.DataFrame, *, pooled: bool = False) -> dict[str, Any]:
    """Fit one model; returns n, β1 with its 95% CI, marginal/conditional R² and the signed Pearson r."""
    result: dict[str, Any] = {"n": len(frame), **_pearson(frame)}
    components = {c: f"0 + C({c})" for c in COMPONENTS if frame[c].nunique() > 1}
    if len(frame) < 5 or frame["abs_bias"].nunique() < 2 or not components:
        return result | {"error": "too few conditions or levels for the mixed model"}
    formula = "abs_asym ~ abs_bias" + (" + C(benchmark)" if pooled and frame["benchmark"].nunique() > 1 else "")
    import statsmodels.formula.api as smf

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            model = smf.mixedlm(formula, frame, groups=np.zeros(len(frame)), vc_formula=components, re_formula="0")
            res = model.fit(reml=True)
        except (np.linalg.LinAlgError, ValueError) as exc:
            return result | {"error": f"mixed model failed: {exc}"}
    beta = float(res.fe_params["abs_bias"])
    low, high = (float(v) for v in res.conf_int().loc["abs_bias"])
    var_fixed = float(np.var(beta * frame["abs_bias"].to_numpy()))
    var_random = float(np.sum(res.vcomp))
    total = var_fixed + var_random + float(res.scale)
    return result | {
        "beta": beta,
        "beta_ci": [low, high] if np.isfinite([low, high]).all() else None,
        "r2_marginal": var_fixed / total,
        "r2_conditional": (var_fixed + var_random) / total,
        "variance_components": dict(zip(res.model.exog_vc.names, map(float, res.vcomp), strict=True)),
        "residual_variance": float(res.scale),
    }


def _pearson(frame: pd.DataFrame) -> dict[str, Any]:
    """Signed r(f0(B) − ½, Asym) over conditions (App. O)."""
    if len(frame) < 3 or frame["signed_bias"].nunique() < 2 or frame["asym"].nunique() < 2:
        return {"pearson_r": None, "pearson_p": None}
    r, p = stats.pearsonr(frame["signed_bias"], frame["asym"])
    return {"pearson_r": float(r), "pearson_p": float(p)}
