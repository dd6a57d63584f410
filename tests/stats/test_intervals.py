"""The shared intervals cross-checked with statsmodels and scipy (every family and the runner use these)."""

from __future__ import annotations

import numpy as np
import pytest
import statsmodels.api as sm
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats
from statsmodels.stats import proportion as smp

from spec_audits.stats.intervals import item_mean, newcombe, ols_cluster, t_interval, wilson, wilson_one


@settings(max_examples=150, deadline=None)
@given(n=st.integers(1, 500), data=st.data(), alpha=st.sampled_from([0.01, 0.05, 0.1]))
def test_wilson_is_statsmodels_wilson(n: int, data: st.DataObject, alpha: float) -> None:
    k = data.draw(st.integers(0, n))
    expected = smp.proportion_confint(k, n, alpha=alpha, method="wilson")
    assert np.allclose(wilson(k, n, alpha), expected, atol=1e-12)
    assert wilson_one(k, n, alpha) == pytest.approx(expected, abs=1e-12)


def test_wilson_one_has_no_interval_without_trials() -> None:
    assert wilson_one(0, 0) is None
    assert isinstance(wilson_one(3, 10)[0], float)  # type: ignore[index]


@settings(max_examples=100, deadline=None)
@given(n1=st.integers(1, 300), n2=st.integers(1, 300), data=st.data())
def test_newcombe_is_statsmodels_newcomb(n1: int, n2: int, data: st.DataObject) -> None:
    x1, x2 = data.draw(st.integers(0, n1)), data.draw(st.integers(0, n2))
    expected = smp.confint_proportions_2indep(x1, n1, x2, n2, method="newcomb", compare="diff")
    assert np.allclose(newcombe(x1, n1, x2, n2), expected, atol=1e-10)


def test_clustered_ols_is_statsmodels_cluster_robust_ols() -> None:
    rng = np.random.default_rng(7)
    x = np.column_stack([np.ones(300), rng.normal(size=300), rng.integers(0, 2, 300)])
    clusters = rng.integers(0, 12, 300)
    y = x @ np.array([0.3, -0.2, 0.5]) + rng.normal(size=12)[clusters] + rng.normal(size=300)
    ours = ols_cluster(x, y, clusters)
    theirs = sm.OLS(y, x).fit(cov_type="cluster", cov_kwds={"groups": clusters})
    assert np.allclose(ours.coef, theirs.params) and np.allclose(ours.se(), theirs.bse)
    assert ours.groups == 12


def test_counts_give_the_fit_of_the_observations_they_stand_for() -> None:
    x = np.array([[1.0, 0.0], [1.0, 1.0], [1.0, 0.0], [1.0, 1.0]])
    clusters, counts = np.array([0, 0, 1, 1]), np.array([2.0, 3.0, 1.0, 2.0])
    sums = np.array([1.0, 2.0, 1.0, 0.0])
    grouped = ols_cluster(x, sums, clusters, counts)
    rows = np.repeat(np.arange(4), counts.astype(int))
    ys = np.array([1, 0, 1, 1, 0, 1, 0, 0], float)  # the observations: sums 1, 2, 1, 0 over 2, 3, 1, 2 rows
    single = ols_cluster(x[rows], ys, clusters[rows])
    assert np.allclose(grouped.coef, single.coef) and np.allclose(grouped.cov, single.cov)


def test_the_between_item_share_is_the_clustered_mean_of_its_items() -> None:
    """A logprob run's share: items of one sample each expect w_i; its error is the t interval of the w_i."""
    w = np.array([0.2, 0.5, 0.9, 0.4, 0.7])
    share, se, df = item_mean(5.0, w.sum(), (w**2).sum(), w.sum(), 5.0, 5)
    assert float(share) == pytest.approx(w.mean())
    assert float(se) == pytest.approx(stats.sem(w))
    low, high = t_interval(share, se, df)
    assert (float(low), float(high)) == pytest.approx(stats.t.interval(0.95, 4, w.mean(), stats.sem(w)))
