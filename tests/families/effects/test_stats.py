"""The effects statistics cross-checked with statsmodels, and planted effects recovered within their intervals."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
from scipy import stats

from spec_audits.families.effects.report import effects_report
from spec_audits.families.effects.score import models
from spec_audits.families.effects.score.frame import Loaded
from spec_audits.families.effects.score.pipeline import analyse
from spec_audits.families.effects.score.stats import ONE_SCENARIO, SAME_SHIFT, contrast, logit
from spec_audits.runner.files_out import write_csv_rows, write_json
from spec_audits.runner.report.markdown import render_markdown
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


def test_the_summed_clustered_fit_is_statsmodels_ols_on_unequal_cells_to_1e_9() -> None:
    """The linear clustered fit reads only counts and sums per (scenario, combination of levels): its
    coefficients, errors, intervals and p agree with statsmodels' row-level OLS, CR1 clustered by scenario
    with t(G - 1) intervals, to 1e-9, on cells of 0 to 5 answers (some combinations absent in a scenario)."""
    rng = np.random.default_rng(7)
    frame = _frame(rng, scenarios=23, per_cell=1)
    frame = frame.loc[frame.index.repeat(rng.integers(0, 6, len(frame)))].reset_index(drop=True)
    frame["y"] = frame["p"] * 10 + frame["condition"].eq("fair") * 0.7 + rng.normal(0, 1, len(frame))
    analysis = {**_analysis(kind="number"), "interactions": [["age", "gender"]]}
    table = frame.astype(dict.fromkeys(["scenario", "condition", "age", "gender"], "category"))
    found = models.fit(table, table["y"].to_numpy(), analysis, binary=False, ordinal=False, mode="logprob", alpha=0.05)
    assert found["model"] == "linear, clustered by scenario"
    terms = models.design_matrix(table, analysis["factors"], ["baseline", "fair"], analysis["interactions"])
    groups = table["scenario"].cat.codes.to_numpy()
    theirs = sm.OLS(table["y"].to_numpy(), terms.x).fit(cov_type="cluster", cov_kwds={"groups": groups}, use_t=True)
    ours = found["terms"]
    assert [t["term"] for t in ours] == terms.names
    for column, expected in [("coef", theirs.params), ("se", theirs.bse), ("low", theirs.conf_int()[:, 0]),
                             ("high", theirs.conf_int()[:, 1]), ("p", theirs.pvalues)]:
        np.testing.assert_allclose([t[column] for t in ours], expected, rtol=1e-9, atol=0, err_msg=column)


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


def _agreeing(level_p: np.ndarray | float, scenarios: int = 12) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A logprob run's P(yes): 0.3 at the reference and `level_p` at the level, in every scenario alike."""
    clusters = np.repeat(np.arange(scenarios), 2)
    at_level = np.tile([False, True], scenarios)
    y = np.where(at_level, np.broadcast_to(level_p, scenarios * 2), 0.3)
    return y, at_level, clusters


def test_scenarios_that_agree_exactly_give_the_shift_with_its_reason_and_no_interval() -> None:
    found = contrast(*_agreeing(0.5), 0.05, probability=True)
    assert found["shift"] == pytest.approx(0.2) and found["clusters"] == 12
    assert found["low"] is None and found["high"] is None and found["p"] is None
    assert found["interval_absent"] == SAME_SHIFT


def test_an_effect_zero_to_rounding_is_zero_with_p_exactly_one() -> None:
    """1e-16 between the levels (a logprob run's rounding) was a t of noise over noise: p = .065."""
    rounding = 0.3 + np.tile([0.0, 1e-16, -1e-16, 2e-16], 6)
    found = contrast(*_agreeing(rounding), 0.05, probability=True)
    assert found["shift"] == 0.0 and found["p"] == 1.0
    assert found["interval_absent"] == f"{SAME_SHIFT}, and p = 1 for a zero shift"


def test_one_scenario_has_no_interval_over_scenarios_and_says_so() -> None:
    rng = np.random.default_rng(2)
    y = rng.random(40)
    found = contrast(y, np.tile([False, True], 20), np.zeros(40, np.int64), 0.05, probability=False)
    assert found["low"] is None and found["p"] is None and found["interval_absent"] == ONE_SCENARIO


def test_a_zero_variance_contrast_gets_its_q_and_the_report_shows_a_dash_with_the_reason(tmp_path: Path) -> None:
    frame = _frame(np.random.default_rng(6), scenarios=5, per_cell=1)
    frame["y_yes"] = 0.4 + frame["age"].map(PLANTED)  # every scenario alike: zero variance for every contrast
    found = analyse(_loaded(frame, "logprob", _analysis()), "yes")
    fair = next(c for c in found["contrasts"] if c["term"] == "condition")
    assert fair["shift"] == 0.0 and fair["p"] == 1.0 and fair["q"] == 1.0 and not fair["significant"]
    a80 = next(c for c in found["contrasts"] if c["level"] == "a80")
    assert a80["shift"] == pytest.approx(-0.2) and a80["p"] is None and "q" not in a80
    terms = {t["term"]: t for t in found["regression"]["terms"]}  # logit P fits exactly: no error either
    assert all(t["interval_absent"].startswith(SAME_SHIFT) and t["low"] is None for t in terms.values())
    assert terms["condition=fair"]["coef"] == 0.0 and terms["condition=fair"]["p"] == 1.0
    markdown = _report(tmp_path, found, len(frame))
    assert "Reference: age = 60 years old (a60), gender = man; conditions" in markdown
    assert "| term | level | reference | n | mean | shift (p) | interval | q (BH) |" in markdown
    assert f"| age | 80 years old (a80) | 60 years old (a60) | {a80['n']} | 20.0% | -20.0 p | — (1) | n/a |" in markdown
    assert "| condition | fair | baseline |" in markdown
    assert "Mean: P at the level, as a percentage; shift and its interval: percentage points (p)" in markdown
    assert f"(1) {SAME_SHIFT}.\n" in markdown and f"(2) {SAME_SHIFT}, and p = 1 for a zero shift.\n" in markdown


def test_the_report_gives_a_probability_shift_and_its_interval_in_percentage_points(tmp_path: Path) -> None:
    rng = np.random.default_rng(7)
    frame = _frame(rng, scenarios=12, per_cell=2)
    frame["y_yes"] = np.clip(frame["p"] + rng.normal(0, 0.05, len(frame)), 0, 1)  # logprob answers
    found = analyse(_loaded(frame, "logprob", _analysis()), "yes")
    a20 = next(c for c in found["contrasts"] if c["level"] == "a20")
    markdown = _report(tmp_path, found, len(frame))
    shown = f"{100 * a20['shift']:.1f} p | \\[{100 * a20['low']:.1f}, {100 * a20['high']:.1f}]"  # markdown escapes [
    assert f"| age | 20 years old (a20) | 60 years old (a60) | {a20['n']:,} | {100 * a20['mean']:.1f}% | {shown} |" \
        in markdown
    coef = next(t["coef"] for t in found["regression"]["terms"] if t["term"] == "age=a20")
    assert f"| age=20 years old (a20) | {coef:.3f} |" in markdown


def _report(tmp_path: Path, found: dict, answered: int) -> str:
    """The markdown report of one stub model's P(yes) contrasts; age's levels have texts, gender's (as in a
    manifest compiled before texts were recorded) none."""
    texts = {"texts": {age: f"{age[1:]} years old" for age in AGES}}
    factors = [{**_analysis()["factors"][0], **texts}, _analysis()["factors"][1]]
    summary = {"factors": factors, "conditions": ["baseline", "fair"], "alpha": 0.05,
               "answer": {"kind": "yesno"}, "crossing": {"kind": "full", "runs": 8, "per_level": {"age": 2}},
               "models": {"stub": {"mode": "logprob", "answered": answered, "abstained": 0, "failed": 0,
                                   "targets": {"yes": {k: v for k, v in found.items() if k != "scenarios"}}}}}
    write_json(tmp_path / "summary.json", summary)
    write_csv_rows([{"model": "stub", "target": "yes", **c} for c in found["contrasts"]], tmp_path / "contrasts.csv")
    return render_markdown(effects_report(tmp_path, tmp_path / "plots"), tmp_path)
