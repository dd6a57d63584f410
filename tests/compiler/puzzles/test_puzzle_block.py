"""A spec's `puzzle` block -> the puzzle library's config models, with problems located at the clause."""

from __future__ import annotations

from pathlib import Path

import pytest

from spec_audits.compiler.errors import ErrorCollector
from spec_audits.compiler.load import load_spec
from spec_audits.dispatch import registry
from spec_audits.puzzles import PropositionalConfig, ZebraConfig
from spec_audits.puzzles.block import puzzle_config
from spec_audits.puzzles.presets import RELEASED

HEADER = 'suite p "P"\nseed 1\n'
STYLE_HINT = ("style preset released styles the bands easy, intermediate and hard with the eight seed-003 clue types "
              "(spec_audits/puzzles/presets.py); style preset minimal styles none")
TIMEOUT = "'timeout' is retired: a time limit made whether a spec compiles depend on the machine's load"
BUDGET_HINT = "a budget counts the candidate clue sets tried per puzzle, e.g. budget 800"


def _block(tmp_path: Path, body: str, bands: tuple[str, ...] = ()) -> tuple[object, list[str]]:
    spec_file = tmp_path / "p.spec"
    spec_file.write_text(HEADER + body, encoding="utf-8")
    spec, _ = load_spec(spec_file, registry.syntax())
    errors = ErrorCollector()
    config = puzzle_config(spec.puzzles[0], errors, bands)
    return config, [f"{d.span.line}:{d.span.column}: {d.message} | {d.hint}" for d in errors.diagnostics]


def test_the_seed_003_block_maps_onto_the_default_config(tmp_path: Path) -> None:
    config, problems = _block(
        tmp_path,
        """puzzle identity:
  people A, B, C, D
  attribute gender from man, woman, non-binary pick 2
  attribute race from Asian, Black, Hispanic, Muslim, White pick 2
  shape canonical: A = G1 R1, B = G1 R2, C = G2 R1, D = G2 R2
  clues direct 1, negation 1, conjunction 1, disjunction 2, implication 2, biconditional 5, same 6, count 7
  bands easy <= 2, intermediate <= 4, hard > 4
  reuse 5 dilemmas with distinct combinations
""",
        ("easy", "hard"),
    )
    assert problems == []
    assert config == PropositionalConfig(name="identity")


def test_phrasings_budget_and_random_shape(tmp_path: Path) -> None:
    config, problems = _block(
        tmp_path,
        """puzzle p:
  attribute gender from man, woman pick 2
  shape random
  clues direct 1, disjunction 2
  phrasing disjunction "{{ x }} or {{ y }}."
  phrasing literal "{{ person }} = {{ value }}"
  budget 50
  reuse 3 dilemmas
""",
    )
    assert problems == [] and isinstance(config, PropositionalConfig)
    assert config.shape.kind == "random" and config.budget == 50
    assert (
        config.clues["disjunction"].phrasing == "{{ x }} or {{ y }}." and config.literal == "{{ person }} = {{ value }}"
    )
    assert config.reuse.dilemmas == 3 and not config.reuse.distinct_combinations


def test_style_clauses_choose_articles_and_redundancy(tmp_path: Path) -> None:
    config, problems = _block(tmp_path, "puzzle p:\n  style articles off\n  style redundancy 3\n")
    assert problems == [] and isinstance(config, PropositionalConfig)
    assert not config.articles and config.redundancy == 3 and config.minimal


def test_a_zebra_block_takes_its_positions_from_the_people(tmp_path: Path) -> None:
    config, problems = _block(
        tmp_path,
        """puzzle z:
  kind zebra
  people 1, 2, 3
  attribute pet from cat, dog, fish pick 3
  attribute drink from tea, milk, water pick 3
  clues at 1, same 2, next_to 2
""",
    )
    assert problems == [] and isinstance(config, ZebraConfig)
    assert config.positions == 3 and set(config.clues) == {"at", "same", "next_to"}


def test_style_preset_released_styles_every_band_and_minimal_none(tmp_path: Path) -> None:
    released, problems = _block(tmp_path, "puzzle p:\n  style preset released\n", ("easy", "hard"))
    assert problems == [] and isinstance(released, PropositionalConfig) and released.styles == RELEASED
    minimal, problems = _block(tmp_path, "puzzle p:\n  style preset minimal\n")
    assert problems == [] and minimal == PropositionalConfig(name="p")


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (
            "puzzle p:\n  kind sudoku\n",
            "4:3: puzzle 'p': unknown puzzle kind 'sudoku' | valid names: 'propositional', 'zebra'",
        ),
        (
            "puzzle p:\n  kind zebra\n  people 1, 2\n  attribute pet from cat, dog\n  shape canonical\n",
            "7:3: puzzle 'p': 'shape' does not apply to zebra puzzles | None",
        ),
        (
            "puzzle p:\n  clues direct 0\n",
            "4:3: puzzle 'p': clue weight of 'direct' must be a number > 0, got 0 | None",
        ),
        (
            "puzzle p:\n  clues nextto 1\n",
            "4:3: puzzle 'p': unknown clue type 'nextto' for propositional puzzles | propositional clue types: "
            "direct, negation, conjunction, disjunction, implication, biconditional, same, count",
        ),
        (
            "puzzle p:\n  kind zebra\n  clues nextto 1\n",
            "5:3: puzzle 'p': unknown clue type 'nextto' for zebra puzzles | did you mean 'next_to'? zebra clue "
            "types: at, not_at, same, not_same, left_of, directly_left, next_to",
        ),
        (
            'puzzle p:\n  phrasing same "x"\n',
            "4:3: puzzle 'p': phrasing of 'same' comes before the 'clues' clause | declare 'clues ...' first",
        ),
        (
            "puzzle p:\n  reuse 5 items\n",
            "4:3: puzzle 'p': reuse counts dilemmas, not 'items' | write: reuse 5 dilemmas with distinct combinations",
        ),
        (
            "puzzle p:\n  shape diagonal\n",
            "4:3: puzzle 'p': shape 'diagonal' declares no cells | write: shape NAME: A = G1 R1, B = G1 R2, ...",
        ),
        (
            "puzzle p:\n  style articles maybe\n",
            "4:3: puzzle 'p': style articles takes on or off, got 'maybe' | None",
        ),
        (
            "puzzle p:\n  style redundancy -1\n",
            "4:3: puzzle 'p': style redundancy needs a whole number of clues >= 0, got -1 | None",
        ),
        (
            "puzzle p:\n  style article off\n",
            "4:3: puzzle 'p': unknown style 'article' | did you mean 'articles'?",
        ),
        (
            "puzzle p:\n  style preset relased\n",
            "4:3: puzzle 'p': unknown style preset 'relased' | did you mean 'released'?",
        ),
        (
            "puzzle p:\n  style preset released\n  style redundancy 3\n",
            "4:3: puzzle 'p': style redundancy 3 pads 1-minimal puzzles; styled bands (easy, intermediate, hard) "
            f"pad to their own clue counts | {STYLE_HINT}",
        ),
        (
            "puzzle p:\n  bands low <= 3, high > 3\n  style preset released\n",
            f"5:3: puzzle 'p': styled band 'easy' is not among the declared bands ['low', 'high'] | {STYLE_HINT}",
        ),
        (
            "puzzle p:\n  clues direct 1, negation 1, conjunction 1, disjunction 2\n  style preset released\n",
            "5:3: puzzle 'p': styled band 'intermediate' draws clue types ['biconditional', 'count', 'implication', "
            f"'same'] that the puzzle does not declare | {STYLE_HINT}",
        ),
        (
            "puzzle p:\n  kind zebra\n  style redundancy 2\n",
            "5:3: puzzle 'p': 'style' applies to propositional puzzles only | None",
        ),
        (
            "puzzle p:\n  attribute race from Asian pick 2\n",
            "4:3: puzzle 'p': attribute 'race' picks 2 of only 1 values | None",
        ),
        (
            "puzzle p:\n  timeout 2.5\n",
            f"4:3: puzzle 'p': {TIMEOUT} | limit the work instead: 'budget N' tries up to N candidate clue sets per "
            "puzzle (default 400); or delete the clause",
        ),
        (
            "puzzle p:\n  kind zebra\n  timeout 5\n",
            f"5:3: puzzle 'p': {TIMEOUT} | limit the work instead: 'budget N' tries up to N candidate clue sets per "
            "puzzle (default 200); or delete the clause",
        ),
        (
            "puzzle p:\n  budget 2.5\n",
            f"4:3: puzzle 'p': budget needs a whole number of attempts >= 1, got 2.5 | {BUDGET_HINT}",
        ),
        (
            "puzzle p:\n  budget 0\n",
            f"4:3: puzzle 'p': budget needs a whole number of attempts >= 1, got 0 | {BUDGET_HINT}",
        ),
    ],
)
def test_problems_are_located_at_their_clause(tmp_path: Path, body: str, expected: str) -> None:
    config, problems = _block(tmp_path, body)
    assert config is None and problems == [expected]
