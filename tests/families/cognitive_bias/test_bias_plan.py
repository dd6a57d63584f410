"""`spec plan` on the shipped conditional-bias spec: Table 1's Δn, δ and Δb, each a one-sample t over one
difference per bank row, with the MDE the formula gives by hand (docs/scoring.md, "Planning a study")."""

from __future__ import annotations

import math

from tests.support import hand_mde, shipped_plan


def test_plan_of_the_shipped_spec_gives_table_1s_effects() -> None:
    output = shipped_plan("cognitive_bias.spec")
    assert "3 statistics, each tested at 0.01667 (BH at 0.05), power 0.8" in output
    assert "variances: assumed: per-row difference variance at its largest (1), one difference per bank row" \
        in output
    # 53 bank rows: var(mean d) = 1 / 53 = 1/2 (1/53 + 1/53), no design effect, 52 df
    mde = hand_mde(0.5, 53, 53, 1, 0.1, 3)
    for name in ("Δn (presence): neutral turn - zero shot", "δ (content): biased turn - neutral turn",
                 "Δb (total): biased turn - zero shot"):
        assert (f"  {name}: n 53 vs 53 in 53 clusters, icc 0.100, design effect 1.00, "
                f"SE {math.sqrt(1 / 53):.4f}, MDE {mde:.4f}") in output
