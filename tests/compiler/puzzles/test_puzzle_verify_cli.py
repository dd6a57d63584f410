"""`spec verify`: re-proves every puzzle of a suite and names each failing item."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from compiler.puzzles import PropositionalConfig, draw_selections, expect_of, generate_puzzle
from compiler.verify_cli import verify

CONFIG = PropositionalConfig(name="identity")


def _row(item: int) -> dict:
    puzzle = generate_puzzle(CONFIG, "hard", 1, ("v", item), draw_selections(CONFIG, 1, ("v", item), 1)[0])
    return {"id": f"row{item}", "puzzle": puzzle, "expect": expect_of(puzzle)}


def _suite(tmp_path: Path, rows: list[dict]) -> Path:
    (tmp_path / "suite.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows + [{"id": "plain"}]))
    return tmp_path


def test_sound_suite_passes(tmp_path: Path) -> None:
    result = CliRunner().invoke(verify, [str(_suite(tmp_path, [_row(0), _row(1)]))])
    assert result.exit_code == 0, result.output
    assert "verified 2 puzzles: 2 sound, 0 failed" in result.output


def test_tampered_puzzles_fail_by_item_id(tmp_path: Path) -> None:
    dropped, swapped = _row(0), _row(1)
    dropped["puzzle"]["clues"].pop()
    dropped["puzzle"]["text"].pop()
    swapped["expect"] = {"solution": {**swapped["expect"]["solution"], "A": {"gender": "x", "race": "y"}}}
    result = CliRunner().invoke(verify, [str(_suite(tmp_path, [dropped, swapped, _row(2)]) / "suite.jsonl")])
    assert result.exit_code == 1
    assert "FAIL row0: the clues admit a model other than the stored solution" in result.output
    assert "FAIL row1: expect.solution differs from the puzzle's solution" in result.output
    assert "row2" not in result.output.replace("verified", "")
    assert "verified 3 puzzles: 1 sound, 2 failed" in result.output
