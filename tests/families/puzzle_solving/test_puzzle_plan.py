"""`spec plan` on the shipped puzzle-solving spec: each puzzle family and band's exact-match accuracy,
planned as the paired difference of two models on its puzzles, with the MDE the formula gives by hand; and
the paired comparisons of several models' accuracies (a planted difference found, equal models tied)."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from spec_audits.families.puzzle_solving.compare import model_comparisons
from tests.support import hand_mde, shipped_plan


def test_plan_of_the_shipped_spec_gives_each_bands_accuracy() -> None:
    output = shipped_plan("puzzle_solving.spec")
    assert "5 statistics, each tested at 0.01 (BH at 0.05), power 0.8" in output
    assert "variances: assumed: answer variance at its largest (1/4), icc 0.1 between a puzzle's samples" in output
    # 5 puzzles of a family and band, one answer each per model: no design effect, 4 df
    mde = hand_mde(0.25, 5, 5, 1, 0.1, 5)
    assert (f"  exact-match accuracy: propositional easy, model vs model: n 5 vs 5 in 5 clusters, icc 0.100, "
            f"design effect 1.00, SE {math.sqrt(0.25 * 2 / 5):.4f}, MDE {mde:.4f}") in output
    assert output.count(", model vs model: n 5 vs 5 in 5 clusters") == 5


def _answers(model: str, solved: list[bool]) -> pd.DataFrame:
    return pd.DataFrame({"model": model, "family": "zebra", "band": "easy", "failed": False,
                         "item_id": [f"p{i:02d}" for i in range(len(solved))],
                         "outcome": ["solved" if s else "unsolved" for s in solved]})


def test_paired_comparisons_find_a_planted_difference_and_tie_equal_models() -> None:
    strong = [i % 5 != 0 for i in range(40)]  # 80% solved
    weak = [i % 5 == 1 for i in range(40)]  # 20%, on puzzles the strong model solves too
    equal = [i % 5 != 4 for i in range(40)]  # 80% like the strong one, on partly other puzzles
    table = pd.concat([_answers("a", strong), _answers("b", weak), _answers("c", equal)], ignore_index=True)
    found = {(r["model_a"], r["model_b"]): r for r in model_comparisons(table, 0.05)["rows"]}
    planted = found[("a", "b")]
    assert planted["difference"] == pytest.approx(0.6) and planted["clusters"] == 40
    # the paired t over puzzles: d = a - b is 1 on 24 puzzles of 40, 0 elsewhere
    d = [float(x) - float(y) for x, y in zip(strong, weak, strict=True)]
    se = pd.Series(d).std() / math.sqrt(40)
    assert planted["se"] == pytest.approx(se) and planted["low"] <= 0.6 <= planted["high"] and planted["significant"]
    assert found[("a", "c")]["difference"] == 0.0 and found[("a", "c")]["tied"] is True
