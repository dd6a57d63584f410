"""`spec plan` on the shipped cue-visibility spec: the Net of each format and each cue gap, per consequence
setting, in percentage points, with the MDE the formula gives by hand (docs/scoring.md, "Planning a study")."""

from __future__ import annotations

import math

from tests.support import hand_mde, shipped_plan


def test_plan_of_the_shipped_spec_names_every_net_and_gap() -> None:
    output = shipped_plan("cue_visibility.spec")
    # 100 dilemmas x 2 settings; per setting Direct and 3 Puzzled bands (4 Nets) and 3 gaps
    assert "14 statistics, each tested at 0.003571 (BH at 0.05), power 0.8" in output
    assert "variances: assumed: answer variance at its largest, icc 0.1 between a dilemma's answers" in output
    for setting in ("with", "without"):
        assert output.count(f", {setting} consequences: n") == 7
    # a Net: 1,200 What-if answers of a format split half and half, each dilemma (12 answers) in one arm
    net = hand_mde(50.0 ** 2, 600, 100, 12, 0.1, 14)
    assert (f"  Net (pp): direct, with consequences: n 600 vs 600 in 100 clusters, icc 0.100, design effect 2.10, "
            f"SE {math.sqrt(2500 * 2.1 * 2 / 600):.4f}, MDE {net:.4f}") in output
    # a gap: Direct's 1,200 answers against a band's 1,200, every dilemma in both (12 answers per arm)
    gap = hand_mde(100.0 ** 2, 1200, 100, 12, 0.1, 14)
    assert (f"  cue gap (pp): direct - puzzled hard, without consequences: n 1,200 vs 1,200 in 100 clusters, "
            f"icc 0.100, design effect 2.10, SE {math.sqrt(10000 * 2.1 * 2 / 1200):.4f}, MDE {gap:.4f}") in output


def test_a_target_effect_in_points_gets_its_scenarios() -> None:
    output = shipped_plan("cue_visibility.spec", "--effect", "10", "--icc", "0")
    assert "To find a shift of 10 in every statistic with power 0.8:" in output
    assert output.count("; 10 needs x") == 14
