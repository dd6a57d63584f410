"""BH-FDR: the hand-worked example of methods §6.11 and statsmodels' fdr_bh."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from statsmodels.stats.multitest import multipletests

from spec_audits.stats.multiple import bh_adjust, bh_within

EXAMPLE = np.array([0.001, 0.008, 0.039, 0.041, 0.042, 0.06, 0.074, 0.205])


def test_hand_worked_example_rejects_two() -> None:
    q = bh_adjust(EXAMPLE)
    assert list(q <= 0.05) == [True, True] + [False] * 6
    assert q[:2] == pytest.approx([0.008, 0.032])  # p·m/rank: 0.001·8/1 and 0.008·8/2
    assert q[2] == pytest.approx(0.042 * 8 / 5)  # step-up: the minimum over ranks >= 3 is at rank 5


def test_matches_statsmodels_on_random_pvalues() -> None:
    p = np.random.default_rng(3).uniform(0, 0.2, 500) ** 2
    assert bh_adjust(p) == pytest.approx(multipletests(p, method="fdr_bh")[1])


def test_nan_left_out_of_m() -> None:
    q = bh_adjust(np.array([0.01, np.nan, 0.04]))
    assert np.isnan(q[1])
    assert q[[0, 2]] == pytest.approx(multipletests([0.01, 0.04], method="fdr_bh")[1])


def test_within_groups_is_separate_per_group() -> None:
    p = pd.Series(np.r_[EXAMPLE, EXAMPLE[:3]])
    groups = pd.Series(["triage"] * 8 + ["bbq"] * 3)
    q = bh_within(p, groups)
    assert q[:8].to_numpy() == pytest.approx(bh_adjust(EXAMPLE))
    assert q[8:].to_numpy() == pytest.approx(bh_adjust(EXAMPLE[:3]))
