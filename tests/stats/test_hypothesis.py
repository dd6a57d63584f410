"""The shared tests cross-checked with statsmodels and scipy."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats
from statsmodels.stats.contingency_tables import mcnemar

from spec_audits.stats.hypothesis import binomial_two_sided_half, mcnemar_exact, sign_test, t_test


@settings(max_examples=150, deadline=None)
@given(b=st.integers(0, 80), c=st.integers(0, 80))
def test_mcnemar_is_statsmodels_exact_mcnemar(b: int, c: int) -> None:
    if b + c == 0:
        assert mcnemar_exact(b, c) is None
        return
    expected = mcnemar(np.array([[10, b], [c, 10]]), exact=True).pvalue
    assert mcnemar_exact(b, c) == pytest.approx(expected, rel=1e-9)


def test_mcnemar_of_the_issue_pushback_design() -> None:
    """56 correct->wrong against 8 wrong->correct: clearly not chance (28 vs 36 would be p = .38)."""
    assert mcnemar_exact(56, 8) == pytest.approx(stats.binomtest(8, 64, 0.5).pvalue, rel=1e-9)
    assert mcnemar_exact(56, 8) < 1e-8
    assert mcnemar_exact(28, 36) == pytest.approx(0.3817, abs=1e-4)


@settings(max_examples=100, deadline=None)
@given(up=st.integers(0, 60), down=st.integers(0, 60))
def test_sign_test_is_scipy_binomtest(up: int, down: int) -> None:
    if up + down == 0:
        assert math.isnan(sign_test(up, down))
        return
    assert sign_test(up, down) == pytest.approx(stats.binomtest(up, up + down, 0.5).pvalue, rel=1e-9)


def test_binomial_matches_scipy_at_integers() -> None:
    for k in range(0, 21):
        assert float(binomial_two_sided_half(k, 20)) == pytest.approx(stats.binomtest(k, 20).pvalue, rel=1e-9)


def test_t_test_is_scipy_one_sample_t() -> None:
    x = np.array([0.3, -0.1, 0.4, 0.2, 0.5, 0.1])
    t, p = t_test(x.mean(), stats.sem(x), len(x) - 1)
    expected = stats.ttest_1samp(x, 0.0)
    assert float(t) == pytest.approx(expected.statistic) and float(p) == pytest.approx(expected.pvalue)
