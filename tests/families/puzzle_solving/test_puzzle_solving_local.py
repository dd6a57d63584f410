"""specs/puzzle_solving.spec on the embedded model: compile, run a few puzzles, and the end of the path for a
model that cannot write a solution. The 270M base model echoes the prompt rather than a solution in 24 tokens,
so not one reply is readable: the run says so and exits with the partial-run status, and `spec score` exits 5
writing no statistics (issue 31 item 7). Scoring and reporting solutions are tested on stubs
(tests/families/puzzle_solving/test_puzzle_solving.py)."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from spec_audits.base import exits
from spec_audits.cli import main
from spec_audits.contract.reader import read_results
from tests.support import shipped_suite


def test_puzzle_solving_runs_on_the_embedded_model_and_says_when_nothing_can_be_scored(tmp_path: Path) -> None:
    cli = CliRunner()
    run = tmp_path / "run"
    ran = cli.invoke(main, ["run", str(shipped_suite("puzzle_solving")), "--limit", "2", "--max-tokens", "24",
                            "--no-cache", "--out", str(run), "--no-progress"])
    rows = list(read_results(run / "results.jsonl"))
    assert len(rows) == 2 and "2 answered, 0 failed of 2" in ran.output
    assert all(r.answer is None for r in rows)  # seeded: the same two echoes on every machine
    assert ran.exit_code == exits.PARTIAL and isinstance(ran.exception, SystemExit), ran.output
    assert f"{run}: no reply of 2 could be read, so nothing can be scored" in ran.output
    assert f"{run}: 2 replies gave no valid answer (the most common, " in ran.output
    scored = cli.invoke(main, ["score", str(run)])
    assert scored.exit_code == exits.NO_DATA and isinstance(scored.exception, SystemExit), scored.output
    assert not (run / "score" / "summary.json").exists()
