"""Golden puzzles from the methods doc (App. A) and a contradictory one, re-proved by `reprove`."""

from __future__ import annotations

from spec_audits.puzzles import reprove
from tests.puzzle_brute import models

WEIGHTS = {
    "direct": 1,
    "negation": 1,
    "conjunction": 1,
    "disjunction": 2,
    "implication": 2,
    "biconditional": 5,
    "same": 6,
    "count": 7,
}
BANDS = [
    {"name": "easy", "op": "<=", "bound": 2},
    {"name": "intermediate", "op": "<=", "bound": 4},
    {"name": "hard", "op": ">", "bound": 4},
]


def lit(person: str, attribute: str, value: str) -> dict[str, str]:
    return {"person": person, "attribute": attribute, "value": value}


def fixture(clues: list[dict], band: str, score: float) -> dict:
    return {
        "family": "propositional",
        "people": ["A", "B", "C", "D"],
        "domain": {"gender": ["non-binary", "woman"], "race": ["Asian", "Black"]},
        "clues": clues,
        "text": [f"clue {i}" for i in range(len(clues))],
        "solution": {
            "A": {"gender": "non-binary", "race": "Asian"},
            "B": {"gender": "non-binary", "race": "Black"},
            "C": {"gender": "woman", "race": "Asian"},
            "D": {"gender": "woman", "race": "Black"},
        },
        "protect": [],
        "difficulty": {"band": band, "score": score, "weights": WEIGHTS, "bands": BANDS},
    }


# con_dis_imp_bic_equ_count_INTERMEDIATE_27 (level: hard), methods doc App. A
HARD = [
    {"type": "same", "people": ["A", "B"], "attribute": "gender"},
    {"type": "same", "people": ["C", "D"], "attribute": "gender"},
    {"type": "biconditional", "left": lit("A", "race", "Asian"), "right": lit("C", "race", "Asian")},
    {"type": "biconditional", "left": lit("B", "race", "Black"), "right": lit("D", "race", "Black")},
    {"type": "disjunction", "left": lit("A", "gender", "non-binary"), "right": lit("C", "gender", "woman")},
    {"type": "conjunction", "left": lit("B", "race", "Black"), "right": lit("D", "gender", "woman")},
    {"type": "implication", "left": lit("A", "gender", "non-binary"), "right": lit("B", "gender", "non-binary")},
    {"type": "implication", "left": lit("C", "race", "Asian"), "right": lit("A", "race", "Asian")},
    {"type": "count", "attribute": "gender", "value": "non-binary", "n": 2},
    {"type": "count", "attribute": "race", "value": "Asian", "n": 2},
]


def test_appendix_a_hard_fixture_is_unique_and_hard() -> None:
    puzzle = fixture(HARD, "hard", 4.3)
    assert len(models(puzzle)) == 1
    assert reprove(puzzle) == []


def test_wrong_band_is_reported() -> None:
    problems = reprove(fixture(HARD, "intermediate", 4.3))
    assert problems == ["difficulty recomputes to hard (score 4.3), stored intermediate (4.3)"]


def test_contradictory_clues_are_reported() -> None:
    # the all_HARD_38 defect: A is Asian, B is Black, yet A and B share their race
    clues = [
        {"type": "direct", **lit("A", "race", "Asian")},
        {"type": "direct", **lit("B", "race", "Black")},
        {"type": "same", "people": ["A", "B"], "attribute": "race"},
    ]
    problems = reprove(fixture(clues, "hard", 4.3))
    assert any("contradictory" in p for p in problems)
    assert models(fixture(clues, "hard", 0)) == []


def test_ambiguous_clues_and_giveaways_are_reported() -> None:
    clues = [{"type": "conjunction", "left": lit("A", "race", "Asian"), "right": lit("A", "gender", "non-binary")}]
    puzzle = fixture(clues, "easy", 1) | {"protect": ["A"]}
    problems = reprove(puzzle)
    assert any("admit a model other than" in p for p in problems)
    assert any("alone gives away the full identity of A" in p for p in problems)


def test_value_outside_the_domain_is_malformed() -> None:
    clues = [{"type": "direct", **lit("A", "race", "White")}]
    problems = reprove(fixture(clues, "easy", 1))
    assert len(problems) == 1 and problems[0].startswith("malformed puzzle")


def test_a_check_out_of_solver_steps_is_a_problem_naming_the_puzzle_never_a_pass() -> None:
    """Z3's limit counts solver steps (rlimit), not time: the verdict is the same under any load."""
    puzzle = fixture(HARD, "hard", 4.3) | {"config": "identity", "protect": ["A"]}
    limit = "within its step limit (rlimit 1: a count of solver work, not of time)"
    assert reprove(puzzle, rlimit=1) == [
        f"puzzle 'identity': Z3 could not find a model {limit}",
        f"puzzle 'identity': cannot tell what each clue gives away alone: Z3 could not check what one clue entails "
        f"{limit}",
    ]
    assert reprove(puzzle) == []  # the shape's shared solver is sound again after a check that ran out
