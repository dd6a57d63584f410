"""The per-target-bias mixed model of the authors' release (their run/evaluate_results.py; the released
significance_results_lmm.csv, 9 rows per model): for each target bias, the content effect δ regressed on
the human bias's category code, with a random intercept per unit (the release's scenario),
`δ ~ hb_code` by statsmodels MixedLM, REML, L-BFGS.

hb_code is the human bias's position among the human biases present for that target, alphabetically
(pandas' category codes), used as a number: a linear trend over the alphabetical order of bias names,
as the release has it, not a categorical effect. A target with fewer than 5 rows (the release's floor),
one human bias, no variation in δ, or a fit that fails or does not converge gets no coefficient; the
`note` column says why (and notes a target whose rows come from one unit, whose intercept the model
cannot tell from the fixed one).
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import pandas as pd

MIN_ROWS = 5  # the release fits no model below this many rows
COLUMNS = ["target_bias", "lmm_coef", "lmm_p", "n", "units", "note"]


def lmm_table(rows: pd.DataFrame, order: list[str]) -> pd.DataFrame:
    """One row per target bias in matrix order: the release's columns, then n, units and a note."""
    return pd.DataFrame([_fit(rows[rows["target"] == target], target) for target in order], columns=COLUMNS)


def _fit(rows: pd.DataFrame, target: str) -> dict[str, Any]:
    data = rows[["content", "human", "unit"]].dropna()
    out: dict[str, Any] = {"target_bias": target, "lmm_coef": math.nan, "lmm_p": math.nan, "n": len(data),
                           "units": data["unit"].nunique(), "note": ""}
    reason = _unfit(data)
    if reason:
        return out | {"note": reason}
    data = data.assign(hb_code=pd.Categorical(data["human"]).codes.astype(float))
    try:
        fit = _mixedlm(data)
    except (ValueError, ArithmeticError, IndexError, KeyError) as err:  # numpy.linalg.LinAlgError is a ValueError
        return out | {"note": f"the mixed model failed: {str(err).splitlines()[0]}"}
    if not fit.converged:
        return out | {"note": "the mixed model did not converge"}
    coef, p = float(fit.params["hb_code"]), float(fit.pvalues["hb_code"])
    note = "" if math.isfinite(p) else "no p: singular fit"
    if out["units"] == 1:  # the release fits it too; the slope is then an ordinary least-squares one
        note = (note + "; " if note else "") + "one unit: its random intercept is not identified"
    return out | {"lmm_coef": coef, "lmm_p": p, "note": note}


def _unfit(data: pd.DataFrame) -> str:
    """Why the release's model cannot be fitted on these rows, or ''."""
    if len(data) < MIN_ROWS:
        return f"fewer than {MIN_ROWS} scored rows"
    if data["human"].nunique() < 2:
        return "one human bias: no slope to fit"
    if data["content"].nunique() < 2:
        return "the content effect does not vary"
    return ""


def _mixedlm(data: pd.DataFrame) -> Any:
    import statsmodels.formula.api as smf

    with warnings.catch_warnings():  # boundary and Hessian warnings: the fit is still the release's estimate
        warnings.simplefilter("ignore")
        return smf.mixedlm("content ~ hb_code", data, groups=data["unit"]).fit(reml=True, method="lbfgs")
