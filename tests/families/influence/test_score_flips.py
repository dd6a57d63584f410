"""Per-item flip rates (methods §6.16) on a hand-built set of trials, counted by hand."""

from __future__ import annotations

import numpy as np
import pandas as pd
from statsmodels.stats.proportion import proportion_confint

from spec_audits.families.influence.score.flips import flip_rates, totals

KEYS = ["benchmark", "model", "factor", "influence"]
# (condition, n_A, n_B, order, w_A, w_B); baseline rows are shared (influence None)
TRIALS = [
    ("baseline", 1, 2, "AB", 2, 0), ("baseline", 1, 2, "BA", 1, 1),  # majority A, pooled over orders
    ("toward_A", 1, 2, "AB", 1, 3),                                  # B: flips away from the target A
    ("toward_B", 1, 2, "AB", 0, 4),                                  # B: flips towards the target B
    ("baseline", 2, 1, "AB", 1, 3),                                  # majority B
    ("toward_A", 2, 1, "AB", 3, 1),                                  # A: flips towards A
    ("toward_B", 2, 1, "AB", 0, 4),                                  # B: stays on the target
    ("baseline", 3, 3, "AB", 2, 2),                                  # tie: no majority, item left out
    ("toward_A", 3, 3, "AB", 4, 0), ("toward_B", 3, 3, "AB", 0, 4),
    ("baseline", 1, 3, "AB", 4, 0),                                  # majority A
    ("toward_A", 1, 3, "AB", 2, 2),                                  # tie under the cue: left out
    ("toward_B", 1, 3, "AB", 4, 0),                                  # A: does not flip towards B
]


def trials() -> pd.DataFrame:
    frame = pd.DataFrame(TRIALS, columns=["condition", "n_A", "n_B", "order", "w_A", "w_B"])
    frame["influence"] = np.where(frame["condition"] == "baseline", None, "emotional")
    return frame.assign(benchmark="triage", model="m", factor="age", group_A="young", group_B="old")


def test_flip_counts_match_the_hand_count() -> None:
    flips = flip_rates(trials(), KEYS).set_index("direction")
    counted = ["n_flip", "k_flip", "n_away", "k_away", "n_towards", "k_towards"]
    assert flips.loc["toward_A", counted].tolist() == [2, 2, 1, 1, 1, 1]
    assert flips.loc["toward_B", counted].tolist() == [3, 1, 1, 0, 2, 1]
    assert flips.loc["toward_B", "flip_rate"] == 1 / 3 and flips.loc["toward_B", "towards_rate"] == 0.5


def test_intervals_are_wilson_intervals() -> None:
    flips = flip_rates(trials(), KEYS, alpha=0.05).set_index("direction")
    for rate in ("flip", "away", "towards"):
        k, n = flips.loc["toward_B", f"k_{rate}"], flips.loc["toward_B", f"n_{rate}"]
        low, high = proportion_confint(k, n, alpha=0.05, method="wilson")
        assert np.allclose(flips.loc["toward_B", [f"{rate}_lo", f"{rate}_hi"]].to_numpy(float), [low, high])


def test_an_influence_with_its_own_baseline_uses_it() -> None:
    frame = trials()
    frame.loc[frame["condition"] == "baseline", "influence"] = "emotional"
    frame.loc[(frame["condition"] == "baseline") & (frame["n_A"] == 2), ["w_A", "w_B"]] = (4, 0)  # now A
    flips = flip_rates(frame, KEYS).set_index("direction")
    assert flips.loc["toward_A", ["n_flip", "k_flip", "n_away", "k_away"]].tolist() == [2, 1, 2, 1]


def test_totals_pool_the_counts() -> None:
    pooled = totals(flip_rates(trials(), KEYS))
    assert {name: (r["k"], r["n"]) for name, r in pooled.items()} == {"flip": (3, 5), "away": (1, 2),
                                                                        "towards": (2, 3)}
