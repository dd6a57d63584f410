"""`spec score` and `spec report` of puzzle-solving runs: accuracy per model, puzzle family and difficulty
band (runner/puzzle_scores.py) -> bands.csv, answers.csv and summary.json; several runs of one suite (a
study, one model each) also get their paired differences (compare.py) -> comparisons.csv."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd

from spec_audits.families.puzzle_solving.compare import model_comparisons
from spec_audits.sdk import (
    DOCUMENT_BYTES,
    RESULTS_FILE,
    Document,
    Heading,
    Manifest,
    Paragraph,
    Table,
    accuracy_by_band,
    check_study_runs,
    comparison_blocks,
    read_bytes_capped,
    read_results,
    read_run,
    score_folder,
    solved_table,
    write_csv,
    write_json,
)

ALPHA = 0.05  # the paired model comparisons' level and BH false discovery rate (the family reads no options)
COLUMNS = ["model", "family", "band", "items", "answered", "solved", "accuracy", "ci_low", "ci_high", "cell_accuracy",
           "abstained", "failed"]


def score(run_dir: Path, out: Path, options: dict[str, Any]) -> list[str]:
    """Score one run: exact-match and per-cell accuracy per band."""
    return score_runs([run_dir], out, options)


def score_runs(run_dirs: list[Path], out: Path, options: dict[str, Any]) -> list[str]:
    """Score runs of one suite together: accuracy per model and band, and each pair of models compared."""
    loaded = [run_table(run_dir) for run_dir in run_dirs]
    check_study_runs(run_dirs, [manifest for manifest, _ in loaded],
                     [table["model"].unique() if not table.empty else [] for _, table in loaded])
    tables = [table for _, table in loaded]
    table = pd.concat(tables, ignore_index=True)
    bands = accuracy_by_band(table)
    score_folder(out)
    write_csv(table, out / "answers.csv", float_format="%.10g")
    write_csv(bands, out / "bands.csv", float_format="%.10g")
    records = json.loads(bands.to_json(orient="records"))
    summary: dict[str, Any] = {"family": "puzzle_solving", "bands": records}
    if not table.empty and table["model"].nunique() > 1:
        summary["comparisons"] = model_comparisons(table, ALPHA)
        write_csv(pd.DataFrame(summary["comparisons"]["rows"]), out / "comparisons.csv")
    write_json(out / "summary.json", summary)
    lines = [f"{len(table)} puzzle answers scored -> {out}"]
    for row in records:
        accuracy = "absent (no answered item)" if row["accuracy"] is None else f"{row['accuracy']:.1%}"
        lines.append(f"  {row['model']} {row['family']} {row['band']}: solved {accuracy} "
                     f"({row['solved']}/{row['answered']}; {row['abstained']} abstained)")
    return lines


def run_table(run_dir: Path) -> tuple[Manifest, pd.DataFrame]:
    """A run's suite manifest and solved table."""
    _, suite = read_run(run_dir)
    return suite.manifest, solved_table(suite.rows, read_results(run_dir / RESULTS_FILE))


def report(score_dir: Path, plots_dir: Path) -> Document:
    """The accuracy-per-band table."""
    summary = json.loads(read_bytes_capped(score_dir / "summary.json", DOCUMENT_BYTES))
    rows = [[_cell(record.get(column)) for column in COLUMNS] for record in summary["bands"]]
    return Document("Puzzle solving", [
        Heading("Accuracy per difficulty band"),
        Paragraph("Exact-match accuracy (every cell of the certified solution right; Wilson 95% interval) and "
                  "mean per-cell accuracy of the answered items, per model, puzzle family and band."),
        Table(COLUMNS, rows),
        *(comparison_blocks(summary["comparisons"], plots_dir) if "comparisons" in summary else [])])


def _cell(value: Any) -> str:
    if value is None:
        return "absent"
    return f"{value:.3f}" if isinstance(value, float) else str(value)
