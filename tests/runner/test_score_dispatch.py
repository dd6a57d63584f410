"""`spec score` and `spec report` find the family of what they are given, or say why they cannot."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from spec_audits.cli import main
from spec_audits.dispatch import registry
from spec_audits.families.influence.score.synthetic import Design, write_run, write_suite


def _run(tmp_path: Path, family: str) -> Path:
    suite = tmp_path / "suite"
    rows = write_suite(suite, Design())
    manifest = json.loads((suite / "manifest.json").read_text())
    manifest["analysis"] = {"family": family}
    (suite / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    write_run(tmp_path / "run", suite, rows, lambda factor, influence, condition: 0.5)
    return tmp_path / "run"


def test_a_run_of_an_unknown_family_is_refused_with_the_known_ones(tmp_path: Path) -> None:
    run_dir = _run(tmp_path, "conditional_bias")
    result = CliRunner().invoke(main, ["score", str(run_dir)])
    assert result.exit_code == 1 and isinstance(result.exception, SystemExit)
    assert result.output == (f"Error: {run_dir / 'run.json'}: analysis family 'conditional_bias' is unknown to "
                             f"this version (known: {', '.join(registry.names())})\n")


def test_a_score_folder_without_a_family_is_refused(tmp_path: Path) -> None:
    (tmp_path / "summary.json").write_text('{"settings": {}}', encoding="utf-8")
    result = CliRunner().invoke(main, ["report", str(tmp_path)])
    assert result.exit_code == 1 and isinstance(result.exception, SystemExit)
    assert result.output == (f"Error: {tmp_path / 'summary.json'}, column 'family': names no known analysis family "
                             f"(family: None; known: {', '.join(registry.names())}); "
                             "score the run again with `spec score`\n")


def test_a_score_folder_without_a_summary_is_refused(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["report", str(tmp_path)])
    assert result.exit_code == 1 and isinstance(result.exception, SystemExit)
    assert result.output == (f"Error: {tmp_path}: has no summary.json: give the folder `spec score` wrote "
                             "(RUN/score by default, or its -o folder)\n")


def test_a_run_folder_not_yet_scored_says_which_command_to_run(tmp_path: Path) -> None:
    (tmp_path / "run.json").write_text("{}", encoding="utf-8")
    result = CliRunner().invoke(main, ["report", str(tmp_path)])
    assert result.exit_code == 1 and isinstance(result.exception, SystemExit)
    assert result.output == (f"Error: {tmp_path}: holds no score yet: run `spec score {tmp_path}` first, then "
                             f"`spec report {tmp_path}`\n")


def test_noise_on_a_counts_table_is_a_usage_error(tmp_path: Path) -> None:
    counts = tmp_path / "counts.csv"
    counts.write_text("benchmark\n", encoding="utf-8")
    result = CliRunner().invoke(main, ["score", "--counts", str(counts), "--noise", str(tmp_path)])
    assert result.exit_code == 2 and isinstance(result.exception, SystemExit)
    assert result.output.splitlines()[-1] == "Error: --noise needs a RUN_DIR, not a counts table"


def test_report_of_a_scored_run_folder_reads_its_score_folder(tmp_path: Path) -> None:
    (tmp_path / "run.json").write_text("{}", encoding="utf-8")
    (tmp_path / "score").mkdir()
    (tmp_path / "score" / "summary.json").write_text('{"family": "gone"}', encoding="utf-8")
    result = CliRunner().invoke(main, ["report", str(tmp_path)])
    assert result.exit_code == 1 and isinstance(result.exception, SystemExit)
    assert result.output.startswith(f"Error: {tmp_path / 'score' / 'summary.json'}, column 'family': names no known")
