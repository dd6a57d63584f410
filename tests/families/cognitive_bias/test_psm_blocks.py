"""Propensity matching finds each treated row's nearest control a block of treated rows at a time (issue 34:
the whole distance matrix was gigabytes at tens of thousands of bank rows): the same matches, ties to the first
control, as the whole matrix gives."""

from __future__ import annotations

import numpy as np
import pytest

from spec_audits.families.cognitive_bias.score import causal


def test_blocks_match_as_the_whole_matrix_does(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(3)
    pool = np.round(rng.random(300), 2)  # rounded: many controls of one score, so ties are common
    wanted = np.round(rng.random(97), 3)
    whole = np.abs(pool[None, :] - wanted[:, None]).argmin(axis=1)
    monkeypatch.setattr(causal, "NEAREST_CELLS", 7 * len(pool))  # 7 treated rows a block, the last one short
    assert causal.nearest(pool, wanted).tolist() == whole.tolist()
    assert causal.nearest(pool, wanted[:0]).tolist() == []


def test_ties_go_to_the_first_control() -> None:
    assert causal.nearest(np.array([0.4, 0.6, 0.4, 0.6]), np.array([0.5, 0.41, 0.59])).tolist() == [0, 0, 1]
