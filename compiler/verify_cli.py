"""`spec verify SUITE`: re-prove every puzzle of a compiled suite with Z3."""

from __future__ import annotations

from pathlib import Path

import click

from compiler.puzzles.verify import reprove
from compiler.suite_model import SuiteRow
from runner.contract import read_suite, read_suite_rows


def _rows(suite: Path) -> list[SuiteRow]:
    return read_suite(suite).rows if suite.is_dir() else read_suite_rows(suite)


def _problems(row: SuiteRow, timeout_ms: int) -> list[str]:
    puzzle = row.puzzle or {}
    problems = reprove(puzzle, timeout_ms)
    expected = (row.expect or {}).get("solution")
    if expected is not None and expected != puzzle.get("solution"):
        problems.append("expect.solution differs from the puzzle's solution")
    return problems


@click.command("verify")
@click.argument("suite", type=click.Path(exists=True, path_type=Path))
@click.option("--timeout-ms", default=10_000, show_default=True, help="Z3 time limit per check.")
def verify(suite: Path, timeout_ms: int) -> None:
    """Re-prove every puzzle in SUITE (a compiled suite folder or suite.jsonl).

    Each puzzle must have exactly one solution over its declared domain (Z3: sat, block, unsat), equal
    to the stored one; no clue may give the answer away alone; its difficulty band must recompute.
    Exits 1 if any puzzle fails.

    \b
    Example:
      spec verify generated/cue_visibility
    """
    rows = [row for row in _rows(suite) if row.puzzle]
    failures = 0
    for row in rows:
        problems = _problems(row, timeout_ms)
        failures += bool(problems)
        for problem in problems:
            click.echo(f"FAIL {row.id}: {problem}", err=True)
    click.echo(f"verified {len(rows)} puzzles: {len(rows) - failures} sound, {failures} failed")
    if failures:
        raise SystemExit(1)
