"""The regression of the outcome on the factors and conditions, fitted the way the outcome calls for.

Treatment coding against each factor's reference (and the baseline), declared interactions as products:

* binary, sampled: logistic, errors clustered by scenario (statsmodels GLM); with `scenarios random`, a
  random intercept per scenario (statsmodels BinomialBayesMixedGLM, variational Bayes).
* binary, logprob: linear on logit P, clustered (stats.ols_cluster); `random`: statsmodels MixedLM.
* scale, sampled: ordinal logistic (statsmodels OrderedModel), clustered (statsmodels has no mixed ordinal
  model, so `random` fits the same, and the table says which model it is).
* scale in logprob mode (the expected rating), or a number: linear, clustered; `random`: MixedLM.

A fit that cannot be made (one outcome only, perfect separation, a singular design) is absent with its
reason, never a number.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from spec_audits.families.effects.score.stats import interval, logit, ols_cluster

BASELINE = "baseline"


@dataclass(frozen=True)
class Terms:
    """The design matrix (intercept first) and the name of each column."""

    x: np.ndarray
    names: list[str]


def design_matrix(frame: pd.DataFrame, factors: list[dict[str, Any]], conditions: list[str],
                  interactions: list[list[str]]) -> Terms:
    columns: dict[str, np.ndarray] = {"intercept": np.ones(len(frame))}
    dummies: dict[str, dict[str, np.ndarray]] = {}
    for factor in factors:
        values = frame[factor["name"]].to_numpy()
        dummies[factor["name"]] = {lv: (values == lv).astype(float) for lv in factor["levels"]
                                   if lv != factor["reference"]}
        columns.update({f"{factor['name']}={lv}": d for lv, d in dummies[factor["name"]].items()})
    condition = frame["condition"].to_numpy()
    columns.update({f"condition={c}": (condition == c).astype(float) for c in conditions if c != BASELINE})
    for first, second in interactions:
        for a, da in dummies[first].items():
            for b, db in dummies[second].items():
                columns[f"{first}={a}:{second}={b}"] = da * db
    return Terms(np.column_stack(list(columns.values())), list(columns))


def fit(frame: pd.DataFrame, y: np.ndarray, terms: Terms, *, binary: bool, ordinal: bool, mode: str,
        scenario_effect: str, alpha: float) -> dict[str, Any]:
    """The fitted model: its kind in words and one row per term (absent with a reason when it cannot be fitted)."""
    scenarios = np.unique(frame["scenario"].to_numpy(), return_inverse=True)[1].ravel()
    kind = _kind(binary, ordinal, mode, scenario_effect)
    if np.unique(y).size < 2:
        return {"model": kind, "terms": [], "absent": "every answer has the same outcome: nothing to regress"}
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            coef, se, df = _FITTERS[kind](y, terms.x, scenarios)
    except (np.linalg.LinAlgError, ValueError) as err:
        return {"model": kind, "terms": [], "absent": f"the model could not be fitted: {err}"}
    if not np.all(np.isfinite(se)):
        return {"model": kind, "terms": [], "absent": "the fit gave no finite standard errors (perfect separation "
                "or a level with one outcome only)"}
    rows = []
    for name, b, s in zip(terms.names[len(terms.names) - len(coef):], coef, se, strict=True):
        low, high, p = interval(float(b), float(s), df, alpha)
        rows.append({"term": name, "coef": float(b), "se": float(s), "low": low, "high": high, "p": p})
    return {"model": kind, "terms": rows}


def _kind(binary: bool, ordinal: bool, mode: str, effect: str) -> str:
    if binary and mode == "sample":
        return "logistic, random intercept per scenario" if effect == "random" else "logistic, clustered by scenario"
    if binary:
        return "linear on logit P, random intercept per scenario" if effect == "random" else \
            "linear on logit P, clustered by scenario"
    if ordinal and mode == "sample":
        return "ordinal logistic, clustered by scenario"  # whatever the scenario effect: see the module's doc
    return "linear, random intercept per scenario" if effect == "random" else "linear, clustered by scenario"


Fitted = tuple[np.ndarray, np.ndarray, int]  # coefficients, standard errors, degrees of freedom of the intervals


def _linear(y: np.ndarray, x: np.ndarray, groups: np.ndarray) -> Fitted:
    found = ols_cluster(x, y, groups)
    return found.coef, found.se(), found.groups - 1


def _logit_linear(y: np.ndarray, x: np.ndarray, groups: np.ndarray) -> Fitted:
    return _linear(logit(y), x, groups)


def _mixed(y: np.ndarray, x: np.ndarray, groups: np.ndarray) -> Fitted:
    from statsmodels.regression.mixed_linear_model import MixedLM

    result = MixedLM(y, x, groups=groups).fit(reml=True)
    k = x.shape[1]
    return np.asarray(result.fe_params), np.asarray(result.bse_fe)[:k], 0


def _logit_mixed(y: np.ndarray, x: np.ndarray, groups: np.ndarray) -> Fitted:
    return _mixed(logit(y), x, groups)


def _logistic(y: np.ndarray, x: np.ndarray, groups: np.ndarray) -> Fitted:
    import statsmodels.api as sm

    result = sm.GLM(y, x, family=sm.families.Binomial()).fit(cov_type="cluster", cov_kwds={"groups": groups})
    return np.asarray(result.params), np.asarray(result.bse), int(groups.max())


def _logistic_mixed(y: np.ndarray, x: np.ndarray, groups: np.ndarray) -> Fitted:
    from statsmodels.genmod.bayes_mixed_glm import BinomialBayesMixedGLM

    membership = np.zeros((len(groups), int(groups.max()) + 1))
    membership[np.arange(len(groups)), groups] = 1.0
    result = BinomialBayesMixedGLM(y, x, membership, np.zeros(membership.shape[1], dtype=int)).fit_vb()
    return np.asarray(result.fe_mean), np.asarray(result.fe_sd), 0


def _ordinal(y: np.ndarray, x: np.ndarray, groups: np.ndarray) -> Fitted:
    from statsmodels.miscmodels.ordinal_model import OrderedModel

    result = OrderedModel(y, x[:, 1:], distr="logit").fit(method="bfgs", disp=False, cov_type="cluster",
                                                           cov_kwds={"groups": groups})
    k = x.shape[1] - 1
    return np.asarray(result.params)[:k], np.asarray(result.bse)[:k], int(groups.max())


_FITTERS = {
    "logistic, clustered by scenario": _logistic,
    "logistic, random intercept per scenario": _logistic_mixed,
    "linear on logit P, clustered by scenario": _logit_linear,
    "linear on logit P, random intercept per scenario": _logit_mixed,
    "ordinal logistic, clustered by scenario": _ordinal,
    "linear, clustered by scenario": _linear,
    "linear, random intercept per scenario": _mixed,
}
