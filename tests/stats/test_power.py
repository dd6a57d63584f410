"""spec_audits.stats.power: the planned size gives the planned power, checked by simulation on synthetic
answers (1,000 runs, fixed seed), and a pilot's intra-cluster correlation recovered."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from spec_audits.stats.paired import clustered_se, contrast_influence
from spec_audits.stats.power import Variance, bh_level, from_one_arm, from_pilot, mde, needed, pool_icc, power_at
from tests.stats.simulate import draw, layout

RUNS = 1000


def _pilot(groups: int = 6, per_arm: int = 5, icc: float = 0.2) -> Variance:
    return Variance("stub", groups * per_arm, groups * per_arm, groups, 1.0, icc, "stub")


def _found(y: np.ndarray, at_level: np.ndarray, clusters: np.ndarray, alpha: float) -> bool:
    estimate = contrast_influence(y, at_level, ~at_level, clusters)
    se = clustered_se(estimate.psi)
    return bool(2 * stats.t.sf(abs(estimate.value) / se, len(estimate.psi) - 1) < alpha)


@pytest.mark.parametrize("icc", [0.0, 0.2])
def test_planned_scenarios_give_the_planned_power(icc: float) -> None:
    """The stub's effect is 0.5 SD; the plan's number of scenarios must find it 80% of the time, and the
    simulated share of significant runs must agree with the planned power within 3.5 simulation SEs."""
    pilot, effect, alpha = _pilot(icc=icc), 0.5, 0.05
    k = needed(pilot, effect, alpha, 0.8, by="scenarios")
    assert k is not None and k > 1
    planned = pilot.scaled(scenarios=k)
    planned_power = power_at(planned, effect, alpha)
    assert planned_power >= 0.8 > power_at(pilot.scaled(scenarios=k - 1), effect, alpha)
    clusters, at_level = layout(planned.clusters, 5)
    ys = draw(np.random.default_rng(35), RUNS, planned.clusters, 5, effect, icc)
    share = np.mean([_found(y, at_level, clusters, alpha) for y in ys])
    assert abs(share - planned_power) < 3.5 * math.sqrt(planned_power * (1 - planned_power) / RUNS)


def test_mde_is_the_effect_found_with_the_asked_power() -> None:
    variance = _pilot().scaled(scenarios=8)
    assert power_at(variance, mde(variance, 0.05, 0.8), 0.05) == pytest.approx(0.8, abs=0.01)
    assert power_at(variance, mde(variance, 0.01, 0.9), 0.01) == pytest.approx(0.9, abs=0.01)


def test_more_samples_cannot_beat_the_clustering() -> None:
    """With icc 0.2 and 6 scenarios the MDE has a floor: no number of samples per cell reaches 0.1, while
    more scenarios do; with icc 0 samples reach it too."""
    assert needed(_pilot(icc=0.2), 0.1, 0.05, 0.8, by="samples") is None
    assert needed(_pilot(icc=0.2), 0.1, 0.05, 0.8, by="scenarios") is not None
    assert needed(_pilot(icc=0.0), 0.1, 0.05, 0.8, by="samples") is not None


def test_design_effect_golden() -> None:
    variance = Variance("x", 100, 100, 10, 0.25, 0.1, "assumed")  # m = 10 answers per arm and cluster
    assert variance.design_effect() == pytest.approx(1.9)
    assert variance.se() == pytest.approx(math.sqrt(0.25 * 1.9 * 0.02))


def test_bh_level_is_the_first_threshold() -> None:
    assert bh_level(0.05, 16) == pytest.approx(0.003125)
    assert bh_level(0.05, 0) == 0.05


def test_pilot_recovers_the_icc() -> None:
    """A big pilot (400 scenarios, 10 answers per arm) with icc 0.3 gives it back within 0.05."""
    clusters, at_level = layout(400, 10)
    y = draw(np.random.default_rng(7), 1, 400, 10, 0.3, 0.3)[0]
    found = from_pilot(y, at_level, clusters)
    assert not isinstance(found, str)
    assert found.icc == pytest.approx(0.3, abs=0.05)
    assert found.unit_var == pytest.approx(1.0, abs=0.08)
    assert found.design_effect == pytest.approx(1 + 9 * found.icc)


def test_pilot_that_cannot_tell_says_so() -> None:
    clusters, at_level = layout(1, 5)
    assert from_pilot(np.arange(10.0), at_level, clusters) == "1 cluster(s), fewer than 2"
    clusters, at_level = layout(3, 5)
    assert from_pilot(np.ones(30), at_level, clusters) == "its answers do not vary within the arms"
    assert from_pilot(np.arange(30.0), np.arange(30) == 0, clusters) == "1 answer(s) in an arm, fewer than 2"


def test_pool_icc_averages_what_a_pilot_measured_only() -> None:
    measured = [Variance(name, 10, 10, 5, 0.2, icc, "pilot", measured=True) for name, icc in (("a", 0.1), ("b", 0.3))]
    assumed = Variance("c", 10, 10, 5, 0.25, 0.05, "assumed")
    assert [v.icc for v in pool_icc([*measured, assumed])] == pytest.approx([0.2, 0.2, 0.05])
    assert pool_icc([assumed]) == [assumed]


def test_one_arm_pilot_recovers_the_icc() -> None:
    """One model's answers (400 puzzles, 10 samples each, icc 0.3) give back their variance and icc."""
    clusters, at_level = layout(400, 10)
    y = draw(np.random.default_rng(11), 1, 400, 10, 0.0, 0.3)[0]
    found = from_one_arm(y[at_level], clusters[at_level])
    assert not isinstance(found, str)
    assert found.icc == pytest.approx(0.3, abs=0.05)
    assert found.unit_var == pytest.approx(1.0, abs=0.1)
    assert from_one_arm(np.ones(40), clusters[:40]) == "its answers do not vary"
    assert from_one_arm(np.arange(20.0), clusters[:20]) == "1 cluster(s), fewer than 2"
