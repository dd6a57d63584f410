"""The regression of the outcome on the factors and conditions, fitted the way the outcome calls for.

Treatment coding against each factor's reference (and the baseline), declared interactions as products:

* binary, sampled: logistic, errors clustered by scenario (statsmodels GLM); with `scenarios random`, a
  random intercept per scenario (statsmodels BinomialBayesMixedGLM, variational Bayes).
* binary, logprob: linear on logit P, clustered (spec_audits.stats.intervals.ols_cluster_summed); `random`:
  statsmodels MixedLM.
* scale, sampled: ordinal logistic (statsmodels OrderedModel), clustered (statsmodels has no mixed ordinal
  model, so `random` fits the same, and the table says which model it is).
* scale in logprob mode (the expected rating), or a number: linear, clustered; `random`: MixedLM.

A fit that cannot be made (one outcome only, perfect separation, a singular design) is absent with its
reason, never a number.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from spec_audits.families.effects.design import BASELINE
from spec_audits.families.effects.score.frame import DESIGN
from spec_audits.families.effects.score.stats import logit, tested
from spec_audits.sdk import ols_cluster_summed


@dataclass(frozen=True)
class Terms:
    """The design matrix (intercept first) and the name of each column."""

    x: np.ndarray
    names: list[str]


def design_matrix(frame: pd.DataFrame, factors: list[dict[str, Any]], conditions: list[str],
                  interactions: list[list[str]]) -> Terms:
    """One indicator column per non-reference level, per intervention and per pair of levels of an interaction."""
    names = ["intercept"]
    blocks: dict[str, tuple[int, list[str], np.ndarray]] = {}  # column -> (first index, its levels, level codes)
    for column, levels, reference in [*((f["name"], f["levels"], f["reference"]) for f in factors),
                                      ("condition", conditions, BASELINE)]:
        kept = [level for level in levels if level != reference]
        codes = pd.Categorical(frame[column], categories=kept).codes.astype(np.int64)  # -1: the reference
        blocks[column] = (len(names), kept, codes)
        names += [f"{column}={level}" for level in kept]
    x = np.zeros((len(frame), len(names) + sum(len(blocks[a][1]) * len(blocks[b][1]) for a, b in interactions)))
    x[:, 0] = 1.0
    rows = np.arange(len(frame))
    for start, _, codes in blocks.values():
        hit = codes >= 0
        x[rows[hit], start + codes[hit]] = 1.0
    for first, second in interactions:
        (_, levels_a, a), (_, levels_b, b) = blocks[first], blocks[second]
        hit = (a >= 0) & (b >= 0)
        x[rows[hit], len(names) + a[hit] * len(levels_b) + b[hit]] = 1.0
        names += [f"{first}={la}:{second}={lb}" for la in levels_a for lb in levels_b]
    return Terms(x, names)


def fit(frame: pd.DataFrame, y: np.ndarray, analysis: dict[str, Any], *, binary: bool, ordinal: bool, mode: str,
        alpha: float) -> dict[str, Any]:
    """The fitted model: its kind in words and one row per term (absent with a reason when it cannot be fitted).
    `frame`'s design columns are categorical."""
    kind = _kind(binary, ordinal, mode, analysis["scenario_effect"])
    if len(y) == 0 or y.min() == y.max():
        return {"model": kind, "terms": [], "absent": "every answer has the same outcome: nothing to regress"}
    outcome = logit(y) if binary and mode == "logprob" else y
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            names, (coef, se, df) = (_summed_fit if kind in _CELL_FITTERS else _row_fit(kind))(frame, outcome, analysis)
    except (np.linalg.LinAlgError, ValueError) as err:
        return {"model": kind, "terms": [], "absent": f"the model could not be fitted: {err}"}
    if not np.all(np.isfinite(se)):
        return {"model": kind, "terms": [], "absent": "the fit gave no finite standard errors (perfect separation "
                "or a level with one outcome only)"}
    rows = []
    scale = max(1.0, float(np.abs(outcome).max()))
    for name, b, s in zip(names[len(names) - len(coef):], coef, se, strict=True):
        term = tested(float(b), float(s), df, alpha, scale)
        rows.append({"term": name, "coef": term.pop("estimate"), "se": float(s), **term})
    return {"model": kind, "terms": rows}


def _summed_fit(frame: pd.DataFrame, outcome: np.ndarray, analysis: dict[str, Any]) -> tuple[list[str], Fitted]:
    """The clustered linear fit from sums (stats.ols_cluster_summed): the count and sum of the outcome per
    scenario and distinct combination of the other cell fields, and the design matrix of one row per
    combination, so its memory is the design's cells, never a row of regressors per answer. A row with a
    missing cell field is left out, as pandas' groupby of the cells leaves it out; the design (a block's label) is
    no cell field."""
    keys = [c for c in frame.columns if isinstance(frame[c].dtype, pd.CategoricalDtype) and c != DESIGN]
    codes = {key: frame[key].cat.codes.to_numpy() for key in keys}  # the frame's own (a byte a row), not copies
    kept = np.logical_and.reduce([codes[key] >= 0 for key in keys])
    rows = np.flatnonzero(kept) if not kept.all() else None  # None: every row (no copy of every column)
    combination = np.zeros(len(frame) if rows is None else len(rows), dtype=np.int64)
    for key in (key for key in keys if key != "scenario"):  # mixed radix, renumbered after each field
        combination = np.unique(combination * len(frame[key].cat.categories) + _taken(codes[key], rows),
                                return_inverse=True)[1].reshape(-1)
    first = np.unique(combination, return_index=True)[1]
    terms = design_matrix(frame.iloc[first if rows is None else rows[first]], analysis["factors"],
                          analysis["conditions"], analysis["interactions"])
    pairs, pair = np.unique(_taken(codes["scenario"], rows).astype(np.int64) * len(first) + combination,
                            return_inverse=True)
    del combination
    pair = pair.reshape(-1)
    found = ols_cluster_summed(terms.x, pairs % len(first), pairs // len(first), np.bincount(pair).astype(float),
                               np.bincount(pair, _taken(outcome, rows)))
    return terms.names, (found.coef, found.se(), found.groups - 1)


def _taken(values: np.ndarray, rows: np.ndarray | None) -> np.ndarray:
    """`values` at `rows` (None: all of them, as they are)."""
    return values if rows is None else values[rows]


def _row_fit(kind: str) -> Callable[[pd.DataFrame, np.ndarray, dict[str, Any]], tuple[list[str], Fitted]]:
    """The fitter of a model statsmodels fits row by row, on the design matrix of a row per answer."""
    def fitted(frame: pd.DataFrame, outcome: np.ndarray, analysis: dict[str, Any]) -> tuple[list[str], Fitted]:
        terms = design_matrix(frame, analysis["factors"], analysis["conditions"], analysis["interactions"])
        scenarios = frame["scenario"].cat.codes.to_numpy().astype(np.int64)
        return terms.names, _ROW_FITTERS[kind](outcome, terms.x, scenarios)
    return fitted


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


def _mixed(y: np.ndarray, x: np.ndarray, groups: np.ndarray) -> Fitted:
    from statsmodels.regression.mixed_linear_model import MixedLM

    result = MixedLM(y, x, groups=groups).fit(reml=True)
    k = x.shape[1]
    return np.asarray(result.fe_params), np.asarray(result.bse_fe)[:k], 0


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


_CELL_FITTERS = ("linear on logit P, clustered by scenario", "linear, clustered by scenario")  # _summed_fit
_ROW_FITTERS = {
    "logistic, clustered by scenario": _logistic,
    "logistic, random intercept per scenario": _logistic_mixed,
    "linear on logit P, random intercept per scenario": _mixed,
    "ordinal logistic, clustered by scenario": _ordinal,
    "linear, random intercept per scenario": _mixed,
}
