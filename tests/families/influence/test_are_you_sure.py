"""specs/are_you_sure.spec on the embedded model: compile, run a few conversations, score the flips and
report. The model answers by position; the path is what is tested."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
from click.testing import CliRunner

from spec_audits.cli import main
from spec_audits.contract.reader import read_results
from tests.support import shipped_suite


def test_are_you_sure_runs_scores_and_reports_on_the_embedded_model(tmp_path: Path) -> None:
    cli = CliRunner()
    run = tmp_path / "run"
    ran = cli.invoke(main, ["run", str(shipped_suite("are_you_sure")), "--limit", "3", "--no-cache", "--out", str(run),
                            "--no-progress"])
    assert ran.exit_code == 0 and ran.exception is None, ran.output
    assert "3 answered, 0 failed of 3" in ran.output and "6 calls" in ran.output  # the first answer, then again
    results = read_results(run / "results.jsonl")
    assert all(r.turn_answers and r.turn_answers["first"]["answer"] in ("A", "B") for r in results)
    assert len((run / "turns.jsonl").read_text(encoding="utf-8").splitlines()) == 3
    scored = cli.invoke(main, ["score", str(run)])
    assert scored.exit_code == 0 and scored.exception is None, scored.output
    assert "  are_you_sure | local/gemma-3-270m: flips after the conversation's turns" in scored.output
    flips = pd.read_csv(run / "score" / "turn_flips.csv")
    overall = flips[flips["by"] == "all"]  # one block (the suite), then a line per level of each arm or factor
    assert list(overall["block"]) == ["are_you_sure"]
    assert int(overall["pairs"].sum()) + int(overall["excluded"].sum()) == 3
    assert json.loads((run / "score" / "summary.json").read_text(encoding="utf-8"))
    reported = cli.invoke(main, ["report", str(run / "score")])
    assert reported.exit_code == 0 and reported.exception is None, reported.output
    first = cli.invoke(main, ["score", str(run), "--turn", "first", "-o", str(tmp_path / "first")])
    assert first.exit_code == 0 and first.exception is None, first.output  # effects on the first answer
    wrong = cli.invoke(main, ["score", str(run), "--turn", "second", "-o", str(tmp_path / "second")])
    assert wrong.exit_code == 1 and "--turn second: row " in wrong.output
    assert "has no answered turn 'second' (it has first, answer)" in wrong.output
