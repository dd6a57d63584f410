"""Malformed puzzle configurations: each raises PuzzleError with a clear reason."""

from __future__ import annotations

import pytest

from spec_audits.puzzles import (
    AttributeConfig,
    Band,
    ClueTypeConfig,
    PropositionalConfig,
    PuzzleError,
    ShapeConfig,
    ZebraConfig,
    draw_selections,
    generate_puzzle,
    generate_skeleton,
    generate_zebra,
    validate_config,
)

BASE = PropositionalConfig(name="identity")


def _with(**update: object) -> PropositionalConfig:
    return BASE.model_copy(update=update)


@pytest.mark.parametrize(
    ("config", "message"),
    [
        (
            _with(
                shape=ShapeConfig(cells={"A": ["G3", "R1"], "B": ["G1", "R2"], "C": ["G2", "R1"], "D": ["G2", "R2"]})
            ),
            "shape cell A = G3 R1 is outside the domain",
        ),
        (_with(shape=ShapeConfig(cells={"A": ["G1", "R1"]})), "shape assigns ['A'] but the people are"),
        (
            _with(shape=ShapeConfig(cells={"A": ["G1"], "B": ["G1", "R2"], "C": ["G2", "R1"], "D": ["G2", "R2"]})),
            "gives no value for ['race']",
        ),
        (
            _with(clues={"direct": ClueTypeConfig(weight=1), "negation": ClueTypeConfig(weight=1)}),
            "difficulty band 'intermediate' needs a mean clue weight in (2, 4]",
        ),
        (_with(people=[f"P{i}" for i in range(9)], shape=ShapeConfig(kind="random")), "262,144 assignments"),
        (
            _with(
                attributes=[AttributeConfig(name="gender", values=["man"], pick=2)], shape=ShapeConfig(kind="random")
            ),
            "picks 2 of only 1 values",
        ),
        (
            _with(bands=[Band(name="hard", op=">", bound=4), Band(name="easy", op="<=", bound=2)]),
            "must be the last band",
        ),
        (_with(bands=[Band(name="a", op="<=", bound=4), Band(name="b", op="<=", bound=2)]), "must rise above"),
        (_with(protect=["Z"]), "protect names unknown people: ['Z']"),
        (
            _with(
                attributes=[
                    AttributeConfig(name="race", values=["x", "y"]),
                    AttributeConfig(name="rank", values=["1", "2"]),
                ]
            ),
            "attribute symbols clash",
        ),
    ],
)
def test_bad_configs(config: PropositionalConfig, message: str) -> None:
    with pytest.raises(PuzzleError) as caught:
        validate_config(config, ["easy", "intermediate", "hard"])
    assert message in str(caught.value)


def test_unknown_band() -> None:
    with pytest.raises(PuzzleError, match="unknown difficulty band 'medium'; declared: easy, intermediate, hard"):
        generate_skeleton(BASE, "medium", 1, ("x",))


def test_clue_types_that_cannot_pin_the_solution() -> None:
    # same-attribute and count clues are blind to swapping G1<->G2 and R1<->R2 everywhere
    config = _with(clues={"same": ClueTypeConfig(weight=6), "count": ClueTypeConfig(weight=7)})
    with pytest.raises(PuzzleError, match="cannot single out the solution"):
        generate_skeleton(config, "hard", 1, ("x",))


def test_band_no_clue_set_reaches() -> None:
    # light same/count clues cannot break the G1<->G2, R1<->R2 symmetry, so every puzzle needs two
    # heavy direct clues (18), and at most 8 light ones exist: the mean stays above 2
    weights = {"direct": 9, "same": 1, "count": 1}
    config = _with(clues={kind: ClueTypeConfig(weight=w) for kind, w in weights.items()})
    with pytest.raises(PuzzleError, match="no clue set reached difficulty band 'easy'"):
        generate_skeleton(config, "easy", 1, ("x",))


def test_bad_phrasing() -> None:
    clues = dict(BASE.clues)
    clues["direct"] = ClueTypeConfig(weight=1, phrasing="{{ who }} is here.")
    config = _with(clues=clues, minimal=False)
    selection = draw_selections(config, 1, ("x",), 1)[0]
    with pytest.raises(PuzzleError, match="phrasing of clue type 'direct' failed: 'who' is undefined"):
        for item in range(20):
            generate_puzzle(config, "easy", 1, ("x", item), selection)


def test_too_many_combinations() -> None:
    with pytest.raises(PuzzleError, match="asked for 121 distinct combinations but only 120 exist"):
        draw_selections(BASE, 1, ("x",), 121)


def test_a_spent_budget_names_it_and_what_to_write() -> None:
    """The budget counts attempts, not time: it decides whether a puzzle is found, never which one
    (one more attempt finds the very skeleton the default budget finds)."""
    with pytest.raises(PuzzleError) as raised:
        generate_skeleton(_with(budget=1), "easy", 1, ("x",))
    assert str(raised.value) == (
        "no clue set reached difficulty band 'easy' (mean weight in (-inf, 2]) within 1 attempt, the budget of puzzle "
        "'identity' (raise it, e.g. 'budget 2' in the puzzle block); closest mean was 3.00")
    assert generate_skeleton(_with(budget=2), "easy", 1, ("x",)) == generate_skeleton(BASE, "easy", 1, ("x",))


def test_a_zebra_budget_counts_attempts() -> None:
    attributes = [AttributeConfig(name=name, values=list(pool)) for name, pool in (("race", "abcd"), ("job", "wxyz"))]
    config = ZebraConfig(name="z", positions=4, budget=2, attributes=attributes)
    with pytest.raises(PuzzleError) as raised:
        generate_zebra(config, "hard", 1, ("x",))
    assert str(raised.value) == (
        "no 4x2 clue set reached difficulty band 'hard' (deduction depth in (2, inf]) within 2 attempts, the budget "
        "of puzzle 'z' (raise it, e.g. 'budget 4' in the puzzle block)")
    assert config.model_copy(update={"budget": 200}).budget == ZebraConfig.model_fields["budget"].default
    found = generate_zebra(config.model_copy(update={"budget": 3}), "hard", 1, ("x",))
    assert found == generate_zebra(config.model_copy(update={"budget": 200}), "hard", 1, ("x",))


def test_zebra_bad_configs() -> None:
    few = ZebraConfig(name="z", positions=5, attributes=[AttributeConfig(name="race", values=["a", "b"])])
    with pytest.raises(PuzzleError, match="has 2 values for 5 positions"):
        validate_config(few)
    bands = [Band(name="deep", op=">", bound=4)]
    deep = ZebraConfig(name="z", positions=2, attributes=[AttributeConfig(name="race", values=["a", "b"])], bands=bands)
    with pytest.raises(PuzzleError, match="contains no deduction depth"):
        validate_config(deep, ["deep"])
