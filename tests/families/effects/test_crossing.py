"""Full factorials and seeded balanced fractions: every level, and every pair of levels of two factors,
equally often, proved by counting and recorded in the manifest."""

from __future__ import annotations

import itertools
from collections import Counter

import pytest

from spec_audits.families.effects import crossing


def test_the_full_cross_holds_every_combination_once() -> None:
    runs = crossing.full((9, 3, 5))
    assert len(runs) == 135 == len(set(runs))
    assert crossing.prove(runs, (9, 3, 5), ("age", "gender", "race")) == {
        "factors": ["age", "gender", "race"], "levels": [9, 3, 5], "runs": 135,
        "per_level": {"age": 15, "gender": 45, "race": 27},
        "per_pair": {"age x gender": 5, "age x race": 3, "gender x race": 9}}


@pytest.mark.parametrize(("sizes", "runs"), [((3, 3, 3, 3), 9), ((3,) * 6, 27), ((5, 5, 5), 25), ((2,) * 5, 8)])
def test_a_fraction_is_balanced_over_levels_and_pairs(sizes: tuple[int, ...], runs: int) -> None:
    found = crossing.fraction(sizes, runs, seed=11)
    assert len(found) == runs
    for f, size in enumerate(sizes):
        assert set(Counter(run[f] for run in found).values()) == {runs // size}
    for f, g in itertools.combinations(range(len(sizes)), 2):
        pairs = Counter((run[f], run[g]) for run in found)
        assert len(pairs) == sizes[f] * sizes[g] and set(pairs.values()) == {runs // (sizes[f] * sizes[g])}
    names = tuple(f"f{i}" for i in range(len(sizes)))
    assert crossing.prove(found, sizes, names)["runs"] == runs


def test_the_seed_picks_the_fraction_and_the_same_seed_the_same_one() -> None:
    assert crossing.fraction((3,) * 4, 9, 1) == crossing.fraction((3,) * 4, 9, 1)
    drawn = {tuple(crossing.fraction((3,) * 4, 9, seed)) for seed in range(6)}
    assert len(drawn) > 1


def test_no_fraction_of_mixed_levels_and_the_message_says_why() -> None:
    with pytest.raises(crossing.CrossingError) as err:
        crossing.fraction((9, 3, 5), 45, seed=1)
    assert str(err.value) == ("no balanced fraction of 45 runs for factors of 9 x 3 x 5 levels: a fraction is built "
                              "when three or more factors all have the same prime number of levels")
    with pytest.raises(crossing.CrossingError) as err:
        crossing.fraction((3,) * 4, 10, seed=1)
    assert str(err.value) == ("no balanced fraction of 10 runs for factors of 3 x 3 x 3 x 3 levels; it can have 9, "
                              "27 runs")


def test_an_unbalanced_set_of_combinations_is_refused() -> None:
    with pytest.raises(crossing.CrossingError, match="not balanced over a x b: between 0 and 1 times"):
        crossing.prove([(0, 0), (1, 1)], (2, 2), ("a", "b"))
