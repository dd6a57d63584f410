"""Zebra family: generated grids re-proved by brute force, deduction depths, determinism."""

from __future__ import annotations

import pytest

from spec_audits.puzzles import AttributeConfig, ZebraConfig, ZebraTarget, generate_zebra, reprove
from spec_audits.puzzles.clues import At, Item, Pair
from spec_audits.puzzles.zebra import Grid
from tests.puzzle_brute import audit

POOLS = {
    "name": ["Alice", "Bob", "Carol", "Dan", "Eve"],
    "race": ["Asian", "Black", "Hispanic", "Muslim", "White"],
    "job": ["nurse", "teacher", "doctor", "lawyer", "chef"],
    "pet": ["cat", "dog", "fish", "bird", "horse"],
}


def config(positions: int, attributes: int) -> ZebraConfig:
    return ZebraConfig(
        name=f"zebra{positions}x{attributes}",
        positions=positions,
        attributes=[
            AttributeConfig(name=n, values=v, refer="{{ value }}" if n == "name" else "the person who is {{ value }}")
            for n, v in list(POOLS.items())[:attributes]
        ],
        target=ZebraTarget(attribute="race", value="Black"),
    )


def _sound(puzzle: dict, band: str) -> bool:
    """Easy and intermediate grids are minimal for their deduction depth, so they may hold clues that
    are redundant for bare uniqueness; hard grids are minimal for uniqueness."""
    problems = audit(puzzle)
    return not [p for p in problems if band == "hard" or "redundant" not in p]


@pytest.mark.parametrize(("band", "low", "high"), [("easy", 0, 1), ("intermediate", 1, 2), ("hard", 2, 4)])
def test_3x3_grids_are_unique_minimal_in_band_and_hide_the_target(band: str, low: int, high: int) -> None:
    for item in range(8):
        puzzle = generate_zebra(config(3, 3), band, 11, ("z", item))
        assert _sound(puzzle, band)
        assert low < puzzle["difficulty"]["score"] <= high
        assert reprove(puzzle) == []


def test_4x3_grids_are_unique() -> None:
    for band in ("easy", "hard"):
        puzzle = generate_zebra(config(4, 3), band, 5, ("z", band))
        assert _sound(puzzle, band)
        assert puzzle["target"]["position"] in (1, 2, 3, 4)
        assert puzzle["solution"][str(puzzle["target"]["position"])]["race"] == "Black"


def test_determinism_and_domain_hides_positions() -> None:
    first = generate_zebra(config(4, 4), "intermediate", 3, ("row", 9))
    assert first == generate_zebra(config(4, 4), "intermediate", 3, ("row", 9))
    assert first != generate_zebra(config(4, 4), "intermediate", 3, ("row", 10))
    for attribute, values in first["domain"].items():
        assert values == [v for v in POOLS[attribute] if v in values]


def test_depths() -> None:
    grid = Grid(3, {"name": ["Alice", "Bob", "Carol"], "race": ["Asian", "Black", "White"]})
    alice, bob, black, white = Item("name", "Alice"), Item("name", "Bob"), Item("race", "Black"), Item("race", "White")
    placed = [At("at", alice, 1), At("at", bob, 2), At("at", black, 3), At("at", white, 1)]
    assert grid.depth([grid.compile(c) for c in placed]) == 1
    # left_of(Alice, Bob) and left_of(Bob, Carol) order the names only by arc consistency
    chain = [Pair("left_of", alice, bob), Pair("left_of", bob, Item("name", "Carol"))]
    races = [At("at", black, 3), At("at", white, 1)]
    assert grid.depth([grid.compile(c) for c in chain + races]) == 2
    assert grid.depth([grid.compile(c) for c in races]) == 4  # names unconstrained: not unique


def test_phrasing() -> None:
    puzzle = generate_zebra(config(4, 3), "intermediate", 2, ("text",))
    assert all(t[0].isupper() and t.endswith(".") for t in puzzle["text"])
    assert "stand in a row" in puzzle["domain_text"]
