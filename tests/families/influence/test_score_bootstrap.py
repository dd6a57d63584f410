"""Cluster bootstrap (methods §6.12): determinism under a seed and agreement with a plain loop."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from spec_audits.families.influence.score.bootstrap import cluster_bootstrap_mean

VALUES = pd.Series([0.1, 0.3, 0.2, 0.4, 0.9, 0.5, 0.05, 0.15])
CLUSTERS = pd.Series(["age", "age", "gender", "gender", "wealth", "wealth", "hand", "hand"])


def test_same_seed_same_interval_and_other_seed_differs() -> None:
    rng = np.random.default_rng(0)
    values, clusters = pd.Series(rng.uniform(size=60)), pd.Series(np.repeat(np.arange(12), 5))
    a = cluster_bootstrap_mean(values, clusters, resamples=5000, seed=7)
    b = cluster_bootstrap_mean(values, clusters, resamples=5000, seed=7)
    c = cluster_bootstrap_mean(values, clusters, resamples=5000, seed=8)
    assert a == b
    assert (a.low, a.high) != (c.low, c.high)
    assert a.value == pytest.approx(values.mean())
    assert a.low < a.value < a.high


def test_matches_a_plain_resampling_loop() -> None:
    """Same draws as rng.integers(0, k, (B, k)) over sorted clusters, pooled mean of drawn clusters."""
    result = cluster_bootstrap_mean(VALUES, CLUSTERS, resamples=300, seed=1)
    names = sorted(CLUSTERS.unique())
    draws = np.random.default_rng(1).integers(0, len(names), size=(300, len(names)))
    means = [pd.concat([VALUES[names[i] == CLUSTERS] for i in row]).mean() for row in draws]
    assert (result.low, result.high) == pytest.approx(tuple(np.percentile(means, [2.5, 97.5])))


def test_one_cluster_gives_a_degenerate_interval_and_nans_are_ignored() -> None:
    result = cluster_bootstrap_mean(pd.Series([0.2, np.nan, 0.4]), pd.Series(["a", "a", "a"]), resamples=50)
    assert (result.value, result.low, result.high, result.n) == pytest.approx((0.3, 0.3, 0.3, 2))
