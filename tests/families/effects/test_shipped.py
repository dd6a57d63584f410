"""The three shipped effects specs compile, run on the embedded model with a small --limit, score and report."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from spec_audits.cli import main
from tests.support import ROOT


def _spec(*args: str) -> str:
    result = CliRunner().invoke(main, list(args))
    assert result.exit_code == 0 and result.exception is None, result.output
    return result.output


@pytest.mark.slow
@pytest.mark.parametrize(("name", "target"), [("demographic_decisions", "yes"), ("sycophancy", "correct"),
                                              ("option_order", "correct")])
def test_a_shipped_effects_spec_runs_on_the_embedded_model(name: str, target: str, tmp_path: Path) -> None:
    suite, run = tmp_path / "suite", tmp_path / "run"
    _spec("compile", str(ROOT / "specs" / f"{name}.spec"), "-o", str(suite))
    _spec("run", str(suite), "--limit", "8", "--out", str(run), "--no-progress")
    assert _spec("score", str(run)).startswith("8 answers of 1 model(s) scored")
    _spec("report", str(run / "score"))
    summary = json.loads((run / "score" / "summary.json").read_text())
    found = summary["models"]["local/gemma-3-270m"]
    assert found["answered"] == 8 and found["mode"] == "logprob" and target in found["targets"]
    report = (run / "score" / "report.md").read_text()
    assert f"### Shifts in P({target}) against the reference" in report and "### Per scenario" in report
    # the right answer moves between the slots of option_order and sycophancy: their position bias is measured
    position = found["position"]
    assert (position["meaning"] == "correct") if target == "correct" else ("absent" in position), position
    assert "Position bias: " in report and (run / "score" / "positions.csv").is_file()
