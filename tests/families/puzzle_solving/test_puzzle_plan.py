"""`spec plan` on the shipped puzzle-solving spec: each band's exact-match accuracy, planned as the paired
difference of two models on the band's puzzles, with the MDE the formula gives by hand."""

from __future__ import annotations

import math

from tests.support import hand_mde, shipped_plan


def test_plan_of_the_shipped_spec_gives_each_bands_accuracy() -> None:
    output = shipped_plan("puzzle_solving.spec")
    assert "3 statistics, each tested at 0.01667 (BH at 0.05), power 0.8" in output
    assert "variances: assumed: answer variance at its largest (1/4), icc 0.1 between a puzzle's samples" in output
    # easy: 5 puzzles x 2 samples per model, a puzzle's 2 samples per arm correlated
    easy = hand_mde(0.25, 10, 5, 2, 0.1, 3)
    assert (f"  exact-match accuracy: band easy, model vs model: n 10 vs 10 in 5 clusters, icc 0.100, "
            f"design effect 1.10, SE {math.sqrt(0.25 * 1.1 * 2 / 10):.4f}, MDE {easy:.4f}") in output
    assert "exact-match accuracy: band hard, model vs model: n 5 vs 5 in 5 clusters" in output
