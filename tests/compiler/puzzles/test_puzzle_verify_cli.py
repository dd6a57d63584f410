"""`spec verify`: re-proves every puzzle of a suite and names each failing item."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from click.testing import CliRunner

from spec_audits.contract.suite_model import SuiteRow
from spec_audits.contract.writer import suite_row, write_suite_folder
from spec_audits.puzzles import PropositionalConfig, draw_selections, expect_of, generate_puzzle
from spec_audits.runner.commands.publish.cli import verify

CONFIG = PropositionalConfig(name="identity")


def _plain(**fields: Any) -> SuiteRow:
    """A row with its content's id, as the compiler writes it."""
    return suite_row({"messages": [{"role": "user", "content": "Who?"}], "samples": 1, "cell": {},
                      "answers": {"a": "a"}, "decode": {}, **fields})


def _fields(item: int) -> dict[str, Any]:
    puzzle = generate_puzzle(CONFIG, "hard", 1, ("v", item), draw_selections(CONFIG, 1, ("v", item), 1)[0])
    return {"puzzle": puzzle, "expect": expect_of(puzzle)}


def _row(item: int) -> SuiteRow:
    return _plain(**_fields(item))


def _suite(tmp_path: Path, rows: list[SuiteRow]) -> Path:
    write_suite_folder(
        tmp_path, [*rows, _plain()], suite="v", spec_file="v.spec", spec_sha256="0" * 64,
        compiler_version="test", schema_version="1", seed=0,
    )
    return tmp_path


def test_sound_suite_passes(tmp_path: Path) -> None:
    result = CliRunner().invoke(verify, [str(_suite(tmp_path, [_row(0), _row(1)]))])
    assert result.exit_code == 0 and result.exception is None, result.output
    assert f"verified {tmp_path}: 3 rows, 2 puzzles: all sound" in result.output


def test_tampered_puzzles_fail_by_item_id(tmp_path: Path) -> None:
    dropped, swapped = _fields(0), _fields(1)
    dropped["puzzle"]["clues"].pop()
    dropped["puzzle"]["text"].pop()
    swapped["expect"] = {"solution": {**swapped["expect"]["solution"], "A": {"gender": "x", "race": "y"}}}
    rows = [_plain(**dropped), _plain(**swapped), _row(2)]
    suite = _suite(tmp_path, rows)
    result = CliRunner().invoke(verify, [str(suite / "suite.jsonl")])
    assert result.exit_code == 1 and isinstance(result.exception, SystemExit)
    first, second, sound = (row.id for row in rows)
    assert f"FAIL suite.jsonl (row {first}): puzzle: the clues admit a model other than the stored solution" in (
        result.output)
    assert f"FAIL suite.jsonl (row {second}): puzzle: expect.solution differs from the puzzle's solution" in (
        result.output)
    assert sound not in result.output
    assert f"verified {suite / 'suite.jsonl'}: 4 rows, 3 puzzles: 3 failures" in result.output
    in_folder = CliRunner().invoke(verify, [str(suite)])  # a folder names the line as well
    assert in_folder.exit_code == 1
    line = 1 + sorted(row.id for row in [*rows, _plain()]).index(first)
    assert f"FAIL suite.jsonl:{line} (row {first}): puzzle: the clues admit a model other than the stored " in (
        in_folder.output)


def test_puzzles_z3_cannot_prove_within_rlimit_fail_by_item_id(tmp_path: Path) -> None:
    rows = [_row(0), _row(1)]
    result = CliRunner().invoke(verify, [str(_suite(tmp_path, rows)), "--rlimit", "1"])
    assert result.exit_code == 1 and isinstance(result.exception, SystemExit), result.output
    out_of_steps = "puzzle: puzzle 'identity': Z3 could not find a model within its step limit (rlimit 1: a count"
    for row in rows:
        assert f"(row {row.id}): {out_of_steps}" in result.output
    assert "2 puzzles: 4 failures" in result.output  # the certificate and the give-away checks, per puzzle
