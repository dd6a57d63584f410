"""Seed-003 family: every generated puzzle re-proved by the independent brute-force enumerator."""

from __future__ import annotations

import pytest

from spec_audits.puzzles import (
    PropositionalConfig,
    ShapeConfig,
    draw_selections,
    expect_of,
    generate_puzzle,
    generate_skeleton,
    instantiate,
    reprove,
    reuse_groups,
)
from spec_audits.puzzles.model import AttributeConfig
from spec_audits.puzzles.presets import RELEASED
from tests.puzzle_brute import audit, models

CONFIG = PropositionalConfig(name="identity")
BANDS = {"easy": (0, 2), "intermediate": (2, 4), "hard": (4, 99)}


def _puzzle(config: PropositionalConfig, band: str, item: int) -> dict:
    selection = draw_selections(config, 7, ("sel", item), 1)[0]
    return generate_puzzle(config, band, 7, ("item", item), selection)


@pytest.mark.parametrize("band", list(BANDS))
def test_generated_puzzles_are_unique_minimal_and_in_band(band: str) -> None:
    for item in range(12):
        puzzle = _puzzle(CONFIG, band, item)
        assert audit(puzzle) == []
        low, high = BANDS[band]
        assert low < puzzle["difficulty"]["score"] <= high
        assert puzzle["difficulty"]["band"] == band
        assert puzzle["certificate"]["solution_count"] == 1
        assert reprove(puzzle) == []


def test_canonical_shape_and_expect() -> None:
    puzzle = _puzzle(CONFIG, "easy", 0)
    g1, g2, r1, r2 = (puzzle["symbols"][s] for s in ("G1", "G2", "R1", "R2"))
    assert puzzle["solution"] == {
        "A": {"gender": g1, "race": r1},
        "B": {"gender": g1, "race": r2},
        "C": {"gender": g2, "race": r1},
        "D": {"gender": g2, "race": r2},
    }
    assert expect_of(puzzle) == {"solution": puzzle["solution"]}
    assert g1 in puzzle["domain_text"] and r2 in puzzle["domain_text"]
    pool = {a.name: a.values for a in CONFIG.attributes}
    assert all(values == sorted(values, key=pool[a].index) for a, values in puzzle["domain"].items())


def test_same_seed_and_coordinates_give_the_same_puzzle() -> None:
    assert _puzzle(CONFIG, "hard", 3) == _puzzle(CONFIG, "hard", 3)
    texts = {tuple(_puzzle(CONFIG, "hard", i)["text"]) for i in range(6)}
    assert len(texts) > 1


WIDE = PropositionalConfig(
    name="wide",
    people=["A", "B", "C", "D", "E"],
    attributes=[
        AttributeConfig(name="gender", values=["man", "woman", "non-binary"], pick=3),
        AttributeConfig(name="race", values=["Asian", "Black", "White"], pick=2),
    ],
    shape=ShapeConfig(kind="random"),
)
DEEP = PropositionalConfig(
    name="deep",
    people=["A", "B", "C"],
    attributes=[
        AttributeConfig(name="gender", values=["man", "woman"]),
        AttributeConfig(name="race", values=["Asian", "Black"]),
        AttributeConfig(name="age", values=["young", "old"], symbol="Y"),
    ],
    shape=ShapeConfig(kind="random"),
)


@pytest.mark.parametrize("config", [WIDE, DEEP], ids=["5-people-3-genders", "3-attributes"])
def test_random_shapes_over_other_sizes(config: PropositionalConfig) -> None:
    shapes = set()
    for item in range(4):
        puzzle = _puzzle(config, "intermediate", item)
        assert audit(puzzle) == []
        shapes.add(str(puzzle["solution"]))
    assert len(shapes) > 1


def test_non_minimal_puzzles_may_keep_redundant_clues() -> None:
    config = CONFIG.model_copy(update={"minimal": False})
    puzzle = _puzzle(config, "easy", 1)
    assert [p for p in audit(puzzle) if "redundant" not in p] == []


def test_one_skeleton_serves_distinct_combinations() -> None:
    skeleton = generate_skeleton(CONFIG, "hard", 1, ("dilemma-group", 0))
    selections = draw_selections(CONFIG, 1, ("dilemma-group", 0), CONFIG.reuse.dilemmas)
    assert len({str(s) for s in selections}) == 5
    puzzles = [instantiate(CONFIG, skeleton, s) for s in selections]
    assert len({p["text"][0] for p in puzzles}) >= 1
    assert all(audit(p) == [] for p in puzzles)
    assert {len(p["clues"]) for p in puzzles} == {len(skeleton.clues)}
    groups = reuse_groups([f"d{i}" for i in range(10)], CONFIG, 1, ("groups",))
    assert sorted(map(len, groups)) == [5, 5] and sorted(sum(groups, [])) == sorted(f"d{i}" for i in range(10))


def test_default_phrasings() -> None:
    puzzle = _puzzle(CONFIG, "intermediate", 5)
    for clue, text in zip(puzzle["clues"], puzzle["text"], strict=True):
        if clue["type"] == "disjunction":
            assert text.endswith(", or both.")
        if clue["type"] == "implication":
            assert text.startswith("If ") and ", then " in text
        if clue["type"] == "biconditional":
            assert " if and only if " in text
        assert " a non-binary" not in text and "are man" not in text


def test_custom_phrasing() -> None:
    clues = dict(CONFIG.clues)
    clues["disjunction"] = clues["disjunction"].model_copy(update={"phrasing": "Either {{ x }} or {{ y }}."})
    config = CONFIG.model_copy(update={"clues": clues})
    texts = [t for i in range(6) for t in _puzzle(config, "intermediate", i)["text"]]
    assert any(t.startswith("Either ") for t in texts)


def test_protect_nobody_allows_full_identity_clues() -> None:
    config = CONFIG.model_copy(update={"protect": []})
    puzzles = [_puzzle(config, "easy", i) for i in range(30)]
    assert all(p["protect"] == [] and audit(p) == [] for p in puzzles)
    pairs = [c for p in puzzles for c in p["clues"] if c["type"] == "conjunction"]
    assert any(c["left"]["person"] == c["right"]["person"] for c in pairs)


@pytest.mark.parametrize("seed", range(8))
def test_a_reuse_group_balances_every_value_in_every_slot(seed: int) -> None:
    """5 dilemmas x 3 combinations: each gender is G1 5 times and G2 5 times, each race R1 3 and R2 3."""
    selections = draw_selections(CONFIG, seed, ("combinations", seed), 15)
    assert len({str(s) for s in selections}) == 15
    for attribute, per_slot in (("gender", 5), ("race", 3)):
        for slot in (0, 1):
            held = [s[attribute][slot] for s in selections]
            values = {v for a in CONFIG.attributes if a.name == attribute for v in a.values}
            assert {held.count(v) for v in values} == {per_slot}, (attribute, slot, held)


PADDED = CONFIG.model_copy(update={"redundancy": 3, "articles": False})


@pytest.mark.parametrize("band", list(BANDS))
def test_redundancy_adds_clues_and_articles_off_drops_articles(band: str) -> None:
    """`style redundancy 3` and `style articles off`: three clues beyond a 1-minimal set, still unique
    (Z3 and the brute-force enumerator), still in band; values bare as in the released puzzles."""
    for item in range(6):
        minimal, released = _puzzle(CONFIG, band, item), _puzzle(PADDED, band, item)
        assert reprove(released) == [] and audit(released) == []
        assert released["difficulty"]["redundant"] == 3 and minimal["difficulty"]["redundant"] == 0
        low, high = BANDS[band]
        assert low < released["difficulty"]["score"] <= high
        removable = [k for k in range(len(released["clues"]))
                     if len(models(released, released["clues"][:k] + released["clues"][k + 1:])) == 1]
        assert removable, "a padded puzzle has clues it can do without"
        text = " ".join(released["text"])
        assert " a man" not in text and " a woman" not in text and " men." not in text and " women." not in text


@pytest.mark.parametrize("band", list(BANDS))
def test_the_released_preset_gives_seeded_padded_puzzles_of_the_bands_style(band: str) -> None:
    """`style preset released`: the same skeleton for the same seed and coordinates, a clue count and mean
    weight inside the band's released ranges, only the family's types, and every puzzle unique (Z3 and
    the brute-force enumerator) with no give-away of a protected person."""
    config, style = CONFIG.model_copy(update={"styles": RELEASED}), RELEASED[band]
    allowed = {kind for family in style.families for kind in family.types}
    for item in range(8):
        skeleton = generate_skeleton(config, band, 11, ("styled", item))
        assert skeleton == generate_skeleton(config, band, 11, ("styled", item))
        assert style.clues[0] <= len(skeleton.clues) <= style.clues[1]
        assert style.score[0] <= skeleton.score <= style.score[1] and {c.type for c in skeleton.clues} <= allowed
        puzzle = instantiate(config, skeleton, draw_selections(config, 11, ("sel", item), 1)[0])
        assert puzzle["protect"] == ([] if style.identities else config.people)
        assert reprove(puzzle) == [] and [p for p in audit(puzzle) if "redundant" not in p] == []


def test_a_styled_band_out_of_budget_says_what_to_raise() -> None:
    config = CONFIG.model_copy(update={"styles": RELEASED, "budget": 1})
    with pytest.raises(ValueError) as raised:  # a PuzzleError
        generate_skeleton(config, "hard", 1, ("x",))
    assert str(raised.value) == (
        "no clue set in the style of band 'hard' (6-12 clues, mean weight in [4.29, 5.12]) within 1 attempt, the "
        "budget of puzzle 'identity' (raise it, e.g. 'budget 2' in the puzzle block), or check the clue weights and "
        "the band's families")
    styled = CONFIG.model_copy(update={"styles": RELEASED})
    assert generate_skeleton(config.model_copy(update={"budget": 2}), "hard", 1, ("x",)) == generate_skeleton(
        styled, "hard", 1, ("x",))


def test_the_released_style_names_one_person_once_per_clue_race_first_and_mixes_count_wording() -> None:
    """No compound clue names one person twice; a clue about one person names race first; an easy
    puzzle stating identities opens with all four, in the people's order; counts are "2" or "two" per
    skeleton, both drawn over enough skeletons; `style preset minimal` (no styles) keeps compounds."""
    config = CONFIG.model_copy(update={"styles": RELEASED})
    wordings, stated = set(), 0
    for band in BANDS:
        for item in range(16):
            skeleton = generate_skeleton(config, band, 5, ("share", item))
            one_person = [c for c in skeleton.clues if getattr(c, "left", None) and c.left.person == c.right.person]
            assert all(c.type == "conjunction" and c.left.attribute == "race" for c in one_person)
            opening = [c.left.person for c in one_person[:4]]
            if band == "easy" and len(one_person) == 4:
                stated += 1
                assert opening == ["A", "B", "C", "D"] and list(skeleton.clues[:4]) == one_person
            text = " ".join(instantiate(config, skeleton, draw_selections(config, 5, ("s", item), 1)[0])["text"])
            wordings |= {word for word in ("Exactly 2 ", "Exactly two ") if word in text}
    assert stated > 0 and wordings == {"Exactly 2 ", "Exactly two "}
    minimal = [generate_skeleton(CONFIG, "hard", 5, ("share", item)) for item in range(16)]
    assert any(c.type != "conjunction" and c.left.person == c.right.person
               for s in minimal for c in s.clues if hasattr(c, "left"))
