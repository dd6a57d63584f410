"""Methods §6.7 worked example to printed precision, and every test statistic against scipy/statsmodels."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats
from statsmodels.stats import proportion as smp

from spec_audits.families.influence.score.counts import BASE_KEYS, CountsTable
from spec_audits.families.influence.score.influence import condition_statistics
from spec_audits.families.influence.score.options import Options
from spec_audits.stats import hypothesis, intervals


def one_condition(c0a: float, c0b: float, caa: float, cab: float, cba: float, cbb: float) -> pd.Series:
    frame = pd.DataFrame(
        [
            dict(
                benchmark="t",
                model="m",
                factor="age",
                influence="x",
                group_A="young",
                group_B="old",
                c_0_A=c0a,
                c_0_B=c0b,
                c_A_A=caa,
                c_A_B=cab,
                c_B_A=cba,
                c_B_B=cbb,
            )
        ]
    )
    return condition_statistics(CountsTable(frame, BASE_KEYS)).iloc[0]


def test_worked_example_counts_100() -> None:
    """§6.7 'as counts with the correction' table, every printed digit."""
    r = one_condition(60, 40, 80, 20, 55, 45)
    assert r.steerability_A == pytest.approx(0.966491, abs=5e-7)
    assert r.steerability_B == pytest.approx(0.202671, abs=5e-7)
    assert r.asymmetry == pytest.approx(-0.763820, abs=5e-7)
    assert r.normalized_asymmetry == pytest.approx(-0.647766, abs=5e-7)
    assert r.z_asymmetry_2v0 == pytest.approx(-1.7824, abs=5e-5)
    assert r.p_asymmetry_2v0 == pytest.approx(0.0747, abs=5e-5)
    assert r.z_asymmetry_4v0 == pytest.approx(-1.4808, abs=5e-5)
    assert r.p_asymmetry_4v0 == pytest.approx(0.1387, abs=5e-5)
    assert r.p_asymmetry == r.p_asymmetry_2v0  # the documented default
    assert r.z_steerability_A == pytest.approx(3.020, abs=5e-4)
    assert r.p_steerability_A == pytest.approx(0.0025, abs=5e-5)
    assert r.z_effect_A == pytest.approx(3.0861, abs=5e-5)
    assert r.p_effect_A == pytest.approx(0.00203, abs=5e-6)
    assert r.z_effect_B == pytest.approx(0.7152, abs=5e-5)
    assert r.p_effect_B == pytest.approx(0.4745, abs=5e-5)
    assert r.p_baseline == pytest.approx(0.05689, abs=5e-6)
    assert r.baseline_neutral
    assert (r.f0_B_lo, r.f0_B_hi) == pytest.approx((0.3094, 0.4980), abs=5e-5)
    assert r.effect_A == pytest.approx(0.20) and r.effect_B == pytest.approx(0.05)


def test_worked_example_variances_and_unpooled_z() -> None:
    v0, va, vb = 1 / 60.5 + 1 / 40.5, 1 / 80.5 + 1 / 20.5, 1 / 55.5 + 1 / 45.5
    assert (v0, va, vb) == pytest.approx((0.041220, 0.061203, 0.039996), abs=5e-7)
    assert va + vb + 2 * v0 == pytest.approx(0.183639, abs=5e-7)
    assert va + vb + 4 * v0 == pytest.approx(0.266080, abs=5e-7)
    z, p = hypothesis.two_proportion_z(80, 100, 60, 100, pooled=False)
    assert (float(z), float(p)) == pytest.approx((3.1623, 0.00157), abs=5e-5)


def test_binomial_39_of_100_is_not_neutral() -> None:
    assert float(hypothesis.binomial_two_sided_half(39, 100)) == pytest.approx(0.0352, abs=5e-5)


def test_worked_example_triage_scale() -> None:
    r = one_condition(480, 320, 640, 160, 440, 360)
    assert (r.steerability_A, r.steerability_B) == pytest.approx((0.979010, 0.204526), abs=5e-7)
    assert (r.asymmetry, r.normalized_asymmetry) == pytest.approx((-0.774484, -0.648898), abs=5e-7)
    assert (r.z_asymmetry_2v0, r.z_asymmetry_4v0) == pytest.approx((-5.0805, -4.2226), abs=5e-5)
    assert r.p_baseline == pytest.approx(1.70e-8, rel=5e-3)


def test_worked_example_frequencies_without_correction() -> None:
    """The frequency version (no correction) is the large-count limit of the corrected counts."""
    k = 1e7
    r = one_condition(0.60 * k, 0.40 * k, 0.80 * k, 0.20 * k, 0.55 * k, 0.45 * k)
    assert (r.steerability_A, r.steerability_B) == pytest.approx((0.980829, 0.204794), abs=5e-7)
    assert r.asymmetry == pytest.approx(-0.776035, abs=5e-7)
    assert r.normalized_asymmetry == pytest.approx(-0.649063, abs=5e-7)


@pytest.mark.parametrize(
    ("f0b", "fab", "fbb", "s_a", "s_b"),
    [(0.14, 0.33, 0.48, -1.107, 1.735), (0.89, 0.98, 0.11, -1.801, -4.182), (0.47, 0.88, 0.81, -2.113, 1.570)],
)
def test_pilot_rows(f0b: float, fab: float, fbb: float, s_a: float, s_b: float) -> None:
    """Tab. 1 pilot rows (plain logits): the exact column of §6.7, ±1 in its last digit (visa s(B) is -4.1815)."""
    k = 1e7
    r = one_condition((1 - f0b) * k, f0b * k, (1 - fab) * k, fab * k, (1 - fbb) * k, fbb * k)
    assert (r.steerability_A, r.steerability_B) == pytest.approx((s_a, s_b), abs=1e-3)


@pytest.mark.parametrize(
    ("k", "n", "low", "high"),
    [(60, 135, 0.3633, 0.5286), (84, 475, 0.1452, 0.2137), (11, 28, 0.2357, 0.5759), (4063, 5200, 0.7699, 0.7924)],
)
def test_wilson_examples(k: int, n: int, low: float, high: float) -> None:
    lo, hi = intervals.wilson(k, n)
    assert (float(lo), float(hi)) == pytest.approx((low, high), abs=5e-5)
    assert (float(lo), float(hi)) == pytest.approx(smp.proportion_confint(k, n, 0.05, method="wilson"), abs=1e-12)


@settings(max_examples=200, deadline=None)
@given(n=st.integers(1, 400), data=st.data())
def test_wilson_contains_the_proportion(n: int, data: st.DataObject) -> None:
    """The report draws error bars relative to the rate: 0/28 once gave a lower bound of 1.4e-17 > 0."""
    k = data.draw(st.integers(0, n))
    lo, hi = intervals.wilson(k, n)
    assert 0 <= float(lo) <= k / n <= float(hi) <= 1
    if k == 0:
        assert float(lo) == 0.0


@settings(max_examples=200, deadline=None)
@given(n=st.integers(1, 400), data=st.data())
def test_binomial_matches_scipy(n: int, data: st.DataObject) -> None:
    k = data.draw(st.integers(0, n))
    expected = stats.binomtest(k, n, 0.5).pvalue
    assert float(hypothesis.binomial_two_sided_half(k, n)) == pytest.approx(expected, rel=1e-9, abs=1e-300)


@settings(max_examples=100, deadline=None)
@given(n1=st.integers(1, 500), n2=st.integers(1, 500), data=st.data(), pooled=st.booleans())
def test_two_proportion_z_matches_statsmodels(n1: int, n2: int, data: st.DataObject, pooled: bool) -> None:
    x1, x2 = data.draw(st.integers(0, n1)), data.draw(st.integers(0, n2))
    if x1 + x2 in (0, n1 + n2) or not pooled and x1 in (0, n1) and x2 in (0, n2):
        return  # zero variance: covered by test_one_sided_arms_stay_finite
    z, p = hypothesis.two_proportion_z(x1, n1, x2, n2, pooled=pooled)
    if pooled:
        expected = smp.proportions_ztest([x1, x2], [n1, n2])
    else:
        res = smp.test_proportions_2indep(x1, n1, x2, n2, method="wald", compare="diff", correction=False)
        expected = (res.statistic, res.pvalue)
    assert (float(z), float(p)) == pytest.approx(tuple(map(float, expected)), rel=1e-9, abs=1e-12)


@settings(max_examples=150, deadline=None)
@given(n1=st.integers(1, 300), n2=st.integers(1, 300), data=st.data(), alpha=st.sampled_from([0.01, 0.05, 0.1]))
def test_newcombe_matches_statsmodels_and_keeps_its_width_at_the_boundaries(
        n1: int, n2: int, data: st.DataObject, alpha: float) -> None:
    x1, x2 = data.draw(st.integers(0, n1)), data.draw(st.integers(0, n2))
    low, high = intervals.newcombe(x1, n1, x2, n2, alpha)
    expected = smp.confint_proportions_2indep(x1, n1, x2, n2, method="newcomb", compare="diff", alpha=alpha)
    assert (float(low), float(high)) == pytest.approx(tuple(map(float, expected)), rel=1e-9, abs=1e-12)
    assert -1 <= float(low) <= x1 / n1 - x2 / n2 <= float(high) <= 1 and float(high) - float(low) > 0.01


def test_effect_intervals_of_a_handful_of_trials_are_never_a_point() -> None:
    """8 of 8 under the cue against 0 of 8 at baseline: the Wald interval is exactly [100, 100] p."""
    r = one_condition(8, 0, 0, 8, 0, 8)
    assert r.effect_B == 1.0 and (r.effect_B_lo, r.effect_B_hi) == pytest.approx((0.5412184, 1.0), abs=1e-7)
    assert np.isnan(intervals.newcombe(3, 0, 1, 4)[0])  # no trials in one arm: no interval


def test_wald_matches_normal_reference() -> None:
    est, var = np.array([-0.76382, 2.0]), np.array([0.183639, 4.0])
    z, p = hypothesis.wald(est, var)
    assert p == pytest.approx(2 * stats.norm.sf(np.abs(est / np.sqrt(var))))
    assert z[1] == pytest.approx(1.0)


def test_expected_counts_interpolate_the_exact_binomial() -> None:
    """Non-integer (logprob) counts: equal to the exact test at integers, monotone in between."""
    p = hypothesis.binomial_two_sided_half(np.array([40.0, 40.25, 40.5, 41.0]), 100.0)
    assert p[0] == pytest.approx(stats.binomtest(40, 100).pvalue)
    assert p[3] == pytest.approx(stats.binomtest(41, 100).pvalue)
    assert p[0] < p[1] < p[2] < p[3]


def test_no_baseline_makes_every_statistic_that_needs_it_absent() -> None:
    r = one_condition(0, 0, 10, 0, 0, 10)  # no baseline trials, fully one-sided influenced conditions
    numeric = r[[c for c in r.index if c.startswith(("steer", "asym", "normalized", "z_", "p_", "effect"))]]
    assert numeric.astype(float).isna().all()
    assert r.fA_B == 0 and r.fB_B == 1 and r.absent.startswith("no baseline trials")


def test_one_sided_arms_stay_finite() -> None:
    r = one_condition(0, 10, 10, 0, 0, 10)  # every arm asked, every answer on one side
    numeric = r[[c for c in r.index if c.startswith(("steer", "asym", "normalized", "z_", "p_"))
                 and "position" not in c]].astype(float)
    assert np.isfinite(numeric).all()
    assert r.steerability_A == pytest.approx(2 * np.log(10.5 / 0.5)) and r.absent.startswith("position")


def test_four_v0_option_changes_the_default_test() -> None:
    frame = pd.DataFrame(
        [
            dict(
                benchmark="t",
                model="m",
                factor="f",
                influence="x",
                group_A="a",
                group_B="b",
                c_0_A=60,
                c_0_B=40,
                c_A_A=80,
                c_A_B=20,
                c_B_A=55,
                c_B_B=45,
            )
        ]
    )
    r = condition_statistics(CountsTable(frame, BASE_KEYS), Options(asym_variance="4v0")).iloc[0]
    assert r.p_asymmetry == pytest.approx(0.1387, abs=5e-5)
