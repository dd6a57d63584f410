"""specs/puzzle_solving.spec on the embedded model: compile, run a few puzzles, score per band and report.
The 270M base model rarely solves one; the path is what is tested."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from spec_audits.cli import main
from spec_audits.contract.reader import read_results
from tests.support import shipped_suite


def test_puzzle_solving_runs_scores_and_reports_on_the_embedded_model(tmp_path: Path) -> None:
    cli = CliRunner()
    run = tmp_path / "run"
    ran = cli.invoke(main, ["run", str(shipped_suite("puzzle_solving")), "--limit", "2", "--max-tokens", "24",
                            "--no-cache", "--out", str(run), "--no-progress"])
    assert ran.exit_code == 0 and ran.exception is None, ran.output
    assert "2 answered, 0 failed of 2" in ran.output
    assert all(r.answer in ("solved", "unsolved", None) for r in read_results(run / "results.jsonl"))
    scored = cli.invoke(main, ["score", str(run)])
    assert scored.exit_code == 0 and scored.exception is None, scored.output
    summary = json.loads((run / "score" / "summary.json").read_text(encoding="utf-8"))
    assert summary["family"] == "puzzle_solving" and sum(b["items"] for b in summary["bands"]) == 2
    reported = cli.invoke(main, ["report", str(run / "score")])
    assert reported.exit_code == 0 and reported.exception is None, reported.output
    assert "## Accuracy per difficulty band" in (run / "score" / "report.md").read_text(encoding="utf-8")
