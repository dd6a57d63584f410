"""The Quickstart sequence on the embedded model: compile a three-row bank, `run --limit 2` (whole units),
score and report. The model answers by position; the path is what is tested."""

from __future__ import annotations

import csv
import json
import shutil
from pathlib import Path

from click.testing import CliRunner

from spec_audits.cli import main
from tests.support import ROOT

SPEC = ROOT / "specs" / "cognitive_bias.spec"
BANK = ROOT / "specs" / "data" / "cognitive_bias" / "bank.head.csv"
SINGLE_ROW_UNITS = (16, 26, 35)  # Framing Effect 25001, Availability Heuristic 1, Confirmation Bias 9003


def _tiny_spec(folder: Path) -> Path:
    with BANK.open(encoding="utf-8", newline="") as handle:
        bank = list(csv.DictReader(handle))
    data = folder / "data" / "cognitive_bias"
    data.mkdir(parents=True)
    with (data / "bank.head.csv").open("w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(bank[0]), lineterminator="\n")
        writer.writeheader()
        writer.writerows(bank[i - 1] for i in SINGLE_ROW_UNITS)
    shutil.copy(BANK.parent / "scenarios.head.csv", data)  # the generator's input, read by every check
    return Path(shutil.copy(SPEC, folder / "cognitive_bias.spec"))


def test_compile_run_limit_score_and_report_on_the_embedded_model(tmp_path: Path) -> None:
    cli = CliRunner()
    suite, run = tmp_path / "suite", tmp_path / "run"
    compiled = cli.invoke(main, ["compile", str(_tiny_spec(tmp_path)), "-o", str(suite)])
    assert compiled.exit_code == 0, compiled.output
    assert "compiled cognitive_bias: 18 prompts" in compiled.output  # 4 x 3 units + 2 x 3 bank rows
    ran = cli.invoke(main, ["run", str(suite), "--limit", "2", "--max-tokens", "4", "--no-cache", "--out", str(run),
                            "--no-progress"])
    assert ran.exit_code == 0, ran.output
    assert "12 answered, 0 failed of 12" in ran.output and "32 calls" in ran.output  # 10S + 6R, S = R = 2
    scored = cli.invoke(main, ["score", str(run)])
    assert scored.exit_code == 0, scored.output
    assert "2 bank rows scored (1 model(s))" in scored.output
    summary = json.loads((run / "score" / "summary.json").read_text(encoding="utf-8"))
    assert summary["family"] == "bias_decomposition" and summary["bank_rows"] == 2
    reported = cli.invoke(main, ["report", str(run / "score")])
    assert reported.exit_code == 0, reported.output
    assert (run / "score" / "report.html").is_file() and (run / "score" / "plots" / "heatmaps.png").is_file()
    markdown = (run / "score" / "report.md").read_text(encoding="utf-8")
    assert "## Table 1" in markdown and "## Per-target-bias mixed model" in markdown
