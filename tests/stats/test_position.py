"""Position bias, the one function every family reports it with, cross-checked with statsmodels."""

from __future__ import annotations

import numpy as np
import pytest
from statsmodels.stats import proportion as smp

from spec_audits.stats.position import position_bias


def _one(k_a: float, n_a: float, k_b: float, n_b: float, **kw: object) -> dict[str, float]:
    found = position_bias(np.array([k_a]), np.array([n_a]), np.array([k_b]), np.array([n_b]), 0.05, **kw)  # type: ignore[arg-type]
    return {key: float(value[0]) for key, value in found.items()}


def test_a_model_that_always_answers_the_first_slot_has_position_share_one() -> None:
    found = _one(40, 40, 40, 40)
    assert found["position"] == 1.0 and found["p"] < 1e-15


def test_the_test_is_statsmodels_two_proportion_z_and_the_interval_newcombe_mapped_to_the_share() -> None:
    # A shown first: 30 of 50 chose the first (A); B shown first: 35 of 60 chose the first (B), 25 chose A
    found = _one(30, 50, 35, 60)
    _, p = smp.proportions_ztest([30, 25], [50, 60])
    low, high = smp.confint_proportions_2indep(30, 50, 25, 60, method="newcomb", compare="diff")
    assert found["p"] == pytest.approx(p)
    assert (found["lo"], found["hi"]) == pytest.approx(((1 + low) / 2, (1 + high) / 2))
    assert found["position"] == pytest.approx((30 / 50 + 35 / 60) / 2)


def test_three_options_count_the_same_option_not_the_other_slot() -> None:
    """With three options, 'not first' is not 'the other option': same_b counts the same meaning."""
    found = _one(20, 40, 10, 40, same_b=np.array([12.0]))
    _, p = smp.proportions_ztest([20, 12], [40, 40])
    assert found["p"] == pytest.approx(p)


def test_one_order_only_has_no_position() -> None:
    found = _one(20, 40, 0, 0)
    assert np.isnan(found["position"]) and np.isnan(found["p"])
