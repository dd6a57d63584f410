"""The effects statistics cross-checked with statsmodels, and planted effects recovered within their intervals."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
from scipy import stats

from spec_audits.families.effects.score import models
from spec_audits.families.effects.score.frame import Loaded
from spec_audits.families.effects.score.pipeline import analyse
from spec_audits.families.effects.score.stats import contrast, logit
from spec_audits.stats.intervals import ols_cluster

AGES = ["a20", "a40", "a60", "a80"]
PLANTED = {"a20": 0.15, "a40": 0.05, "a60": 0.0, "a80": -0.2}  # shift in P(yes) against a60


def _analysis(kind: str = "yesno", effect: str = "cluster") -> dict:
    return {"family": "effects", "answer": {"kind": kind, "tokens": ["yes", "no"]}, "correct": False,
            "factors": [{"name": "age", "levels": AGES, "reference": "a60"},
                        {"name": "gender", "levels": ["man", "woman"], "reference": "man"}],
            "conditions": ["baseline", "fair"], "interactions": [], "scenario_effect": effect, "alpha": 0.05}


def _frame(rng: np.random.Generator, scenarios: int = 30, per_cell: int = 6) -> pd.DataFrame:
    rows = [{"scenario": f"s{s}", "age": age, "gender": g, "condition": c}
            for s in range(scenarios) for age in AGES for g in ("man", "woman") for c in ("baseline", "fair")
            for _ in range(per_cell)]
    frame = pd.DataFrame(rows)
    offset = rng.normal(0, 0.05, scenarios)[frame["scenario"].str[1:].astype(int)]
    frame["p"] = np.clip(0.5 + frame["age"].map(PLANTED) + offset, 0.01, 0.99)
    return frame


def test_ols_cluster_is_statsmodels_ols_with_clustered_errors() -> None:
    rng = np.random.default_rng(1)
    x = np.column_stack([np.ones(400), rng.normal(size=400), rng.integers(0, 2, 400)])
    groups = rng.integers(0, 17, 400)
    y = x @ [1.0, 0.5, -0.3] + rng.normal(size=400) + groups * 0.05
    ours = ols_cluster(x, y, groups)
    theirs = sm.OLS(y, x).fit(cov_type="cluster", cov_kwds={"groups": groups})
    assert np.allclose(ours.coef, theirs.params) and np.allclose(ours.cov, theirs.cov_params())


def test_a_contrast_is_the_saturated_logistic_fit_on_the_logit_scale() -> None:
    """Shift in P: the OLS slope; shift in logit: the saturated logistic model's coefficient, and the delta
    method's clustered interval is the logistic fit's clustered one."""
    rng = np.random.default_rng(2)
    at_level = rng.integers(0, 2, 600).astype(bool)
    clusters = rng.integers(0, 20, 600)
    y = (rng.random(600) < np.where(at_level, 0.7, 0.4)).astype(float)
    found = contrast(y, at_level, clusters, 0.05, probability=True)
    x = np.column_stack([np.ones(600), at_level.astype(float)])
    ols = sm.OLS(y, x).fit(cov_type="cluster", cov_kwds={"groups": clusters})
    glm = sm.GLM(y, x, family=sm.families.Binomial()).fit(cov_type="cluster", cov_kwds={"groups": clusters})
    assert found["shift"] == pytest.approx(ols.params[1]) and found["p"] == pytest.approx(
        float(2 * stats.t.sf(abs(ols.tvalues[1]), 19)))
    assert found["logit_shift"] == pytest.approx(glm.params[1])
    half = (found["logit_high"] - found["logit_low"]) / 2
    assert half / stats.t.ppf(0.975, 19) == pytest.approx(glm.bse[1], rel=1e-6)


def _loaded(frame: pd.DataFrame, mode: str, analysis: dict) -> Loaded:
    return Loaded(frame, analysis, mode, "stub", 0, 0)


def test_planted_age_effects_in_p_yes_are_recovered_within_their_intervals() -> None:
    rng = np.random.default_rng(3)
    frame = _frame(rng)
    frame["y_yes"] = (rng.random(len(frame)) < frame["p"]).astype(float)  # sampled answers
    found = analyse(_loaded(frame, "sample", _analysis()), "yes")
    ages = {c["level"]: c for c in found["contrasts"] if c["term"] == "age"}
    for age, planted in PLANTED.items():
        if age != "a60":
            assert ages[age]["low"] < planted < ages[age]["high"], (age, ages[age])
    assert ages["a80"]["significant"] and ages["a20"]["significant"]
    condition = next(c for c in found["contrasts"] if c["term"] == "condition")
    assert condition["low"] < 0 < condition["high"]  # nothing planted for the intervention
    regression = {t["term"]: t for t in found["regression"]["terms"]}
    assert found["regression"]["model"] == "logistic, clustered by scenario"
    planted_logit = logit(0.5 + PLANTED["a80"]) - logit(0.5)
    assert regression["age=a80"]["low"] < planted_logit < regression["age=a80"]["high"]


@pytest.mark.parametrize("effect", ["cluster", "random"])
def test_a_logprob_run_regresses_logit_p_and_matches_statsmodels(effect: str) -> None:
    rng = np.random.default_rng(4)
    frame = _frame(rng, per_cell=1)
    frame["p"] = np.clip(frame["p"] + rng.normal(0, 0.03, len(frame)), 0.01, 0.99)
    frame["y_yes"] = frame["p"]
    found = analyse(_loaded(frame, "logprob", _analysis(effect=effect)), "yes")
    terms = models.design_matrix(frame, _analysis()["factors"], ["baseline", "fair"], [])
    groups = pd.factorize(frame["scenario"])[0]
    if effect == "cluster":
        theirs = sm.OLS(logit(frame["p"].to_numpy()), terms.x).fit(cov_type="cluster", cov_kwds={"groups": groups})
        params, bse = theirs.params, theirs.bse
    else:
        mixed = sm.MixedLM(logit(frame["p"].to_numpy()), terms.x, groups=groups).fit(reml=True)
        params, bse = mixed.fe_params, mixed.bse_fe
    ours = found["regression"]["terms"]
    assert [t["term"] for t in ours] == terms.names
    assert np.allclose([t["coef"] for t in ours], params) and np.allclose([t["se"] for t in ours], bse)


def test_an_interaction_is_a_product_of_the_two_factors_dummies() -> None:
    frame = _frame(np.random.default_rng(5), scenarios=2, per_cell=1)
    terms = models.design_matrix(frame, _analysis()["factors"], ["baseline", "fair"], [["age", "gender"]])
    assert terms.names[-3:] == ["age=a20:gender=woman", "age=a40:gender=woman", "age=a80:gender=woman"]
    column = terms.x[:, terms.names.index("age=a20:gender=woman")]
    assert np.array_equal(column, ((frame["age"] == "a20") & (frame["gender"] == "woman")).to_numpy(float))


def test_one_outcome_only_leaves_the_regression_absent_with_its_reason() -> None:
    frame = _frame(np.random.default_rng(6), scenarios=3, per_cell=1)
    frame["y_yes"] = 1.0
    found = analyse(_loaded(frame, "sample", _analysis()), "yes")
    assert found["regression"] == {"model": "logistic, clustered by scenario", "terms": [],
                                   "absent": "every answer has the same outcome: nothing to regress"}
    assert {c["absent"] for c in found["contrasts"]} == {
        "a mean of 0 or 1 at the level or the reference: its logit is infinite"}


def test_a_scale_is_fitted_by_an_ordinal_model() -> None:
    rng = np.random.default_rng(7)
    frame = _frame(rng, scenarios=12, per_cell=2)
    frame["y"] = np.clip(np.round(3 + 4 * frame["age"].map(PLANTED) + rng.normal(0, 0.8, len(frame))), 1, 5)
    found = analyse(_loaded(frame, "sample", _analysis("scale")), None)
    assert found["regression"]["model"] == "ordinal logistic, clustered by scenario"
    terms = {t["term"]: t for t in found["regression"]["terms"]}
    assert "intercept" not in terms and terms["age=a80"]["high"] < 0 < terms["age=a20"]["low"]
    assert "logit_shift" not in found["contrasts"][0]
