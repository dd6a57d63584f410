"""Eq. 1 on the design proposal's public fixtures, and the hand-computed 2x2 DiD fixture."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pandas as pd
import pytest
import statsmodels.formula.api as smf

from spec_audits.families.cognitive_bias.score.did import Z95, did
from spec_audits.families.cognitive_bias.score.metric import bias_metric, effects

ANCHORING = {"k": 1, "x_1": 7, "x_2": 7, "flip_treatment": False, "n_options": 11}


@pytest.mark.parametrize(
    ("a1", "a2", "metric", "expected"),
    [
        (3, 7, ANCHORING, 1.0),
        (7, 7, ANCHORING, 0.0),
        (3, 6, {"k": -1, "x_1": 0, "x_2": 0, "flip_treatment": False, "n_options": 11}, 0.5),
        (5, 5, {"k": 1, "x_1": -2, "x_2": -3, "flip_treatment": False, "n_options": 11}, -0.125),
        # Loss Aversion, flipped, 7 options: a2 = 2 is scored as 4
        (4, 2, {"k": 1, "x_1": 0, "x_2": 0, "flip_treatment": True, "n_options": 7}, 0.0),
    ],
)
def test_public_metric_fixtures(a1: int, a2: int, metric: dict, expected: float) -> None:
    assert bias_metric(a1, a2, metric) == pytest.approx(expected, abs=1e-12)


def test_an_abstention_is_nan_never_zero() -> None:
    assert bias_metric(float("nan"), 3, ANCHORING) != bias_metric(float("nan"), 3, ANCHORING)


def _fixture() -> pd.DataFrame:
    """Two scenarios x a diagonal and an off-diagonal human bias (design proposal, section 5)."""
    rows = [("Anchoring", "Anchoring", "S1", 1, 0.5, 0), ("Anchoring", "Framing Effect", "S1", 1, 0.5, 1 / 3),
            ("Availability Heuristic", "Availability Heuristic", "S2", 0.5, 0, 0.75),
            ("Availability Heuristic", "Framing Effect", "S2", 0.5, 0, -0.5)]
    return pd.DataFrame(rows, columns=["target", "human", "unit", "m_zero_shot", "m_neutral_turn", "m_biased_turn"])


def test_the_2x2_fixture_gives_the_hand_computed_effects_and_both_did_variants() -> None:
    frame = _fixture()
    scalars = pd.DataFrame([effects(*r) for r in frame[["m_zero_shot", "m_neutral_turn", "m_biased_turn"]].values])
    assert scalars["presence"].mean() == pytest.approx(-1 / 2)
    assert scalars["content"].mean() == pytest.approx(float(Fraction(7, 48)))
    assert scalars["total"].mean() == pytest.approx(float(Fraction(-17, 48)))
    assert (scalars["total"] - scalars["presence"] - scalars["content"]).abs().max() < 1e-12
    paper, released = did(frame, "abs"), did(frame, "authors")
    assert paper["att"] == pytest.approx(7 / 48, abs=1e-12)
    assert released["att"] == pytest.approx(-5 / 48, abs=1e-12)
    assert (paper["ci_high"] - paper["att"]) / paper["se"] == pytest.approx(Z95)


def test_did_is_statsmodels_clustered_ols_of_the_stacked_rows() -> None:
    """did() fits from sums (spec_audits/stats/intervals.py); statsmodels' formula fit of the four stacked
    observations a bank row gives the same ATT and clustered SE, for three targets, four humans, 15 units."""
    rng = np.random.default_rng(5)
    n = 150
    rows = pd.DataFrame({"target": rng.choice(["A", "B", "C"], n), "human": rng.choice(["A", "B", "C", "D"], n),
                         "unit": rng.choice([f"u{i}" for i in range(15)], n),
                         **{f"m_{c}": rng.uniform(-1, 1, n) for c in ("zero_shot", "neutral_turn", "biased_turn")}})
    for variant in ("abs", "authors"):
        scores = {"abs": (rows["m_zero_shot"].abs(), rows["m_zero_shot"].abs(), rows["m_neutral_turn"].abs(),
                          rows["m_biased_turn"].abs()),
                  "authors": (0 * rows["m_zero_shot"], 0 * rows["m_zero_shot"], rows["m_neutral_turn"],
                              rows["m_biased_turn"])}[variant]
        stacked = pd.concat([rows[["target", "human", "unit"]].assign(group=g, post=p, score=s.to_numpy())
                             for (g, p), s in zip(((0, 0), (1, 0), (0, 1), (1, 1)), scores, strict=True)])
        fit = smf.ols("score ~ group * post + C(target) + C(human)", data=stacked).fit(
            cov_type="cluster", cov_kwds={"groups": pd.factorize(stacked["unit"])[0]})
        found = did(rows, variant)
        assert found["att"] == pytest.approx(fit.params["group:post"], rel=1e-10)
        assert found["se"] == pytest.approx(fit.bse["group:post"], rel=1e-10)
        assert found["n_rows"] == n
