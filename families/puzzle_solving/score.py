"""`spec score` and `spec report` of puzzle-solving runs: accuracy per model, puzzle family and difficulty
band (runner/puzzle_scores.py) -> bands.csv, answers.csv and summary.json."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from spec_audits.sdk import (
    DOCUMENT_BYTES,
    RESULTS_FILE,
    Document,
    Heading,
    Paragraph,
    Table,
    accuracy_by_band,
    read_bytes_capped,
    read_results,
    read_run,
    score_folder,
    solved_table,
    write_csv,
    write_json,
)

COLUMNS = ["model", "family", "band", "items", "answered", "solved", "accuracy", "ci_low", "ci_high", "cell_accuracy",
           "abstained", "failed"]


def score(run_dir: Path, out: Path, options: dict[str, Any]) -> list[str]:
    """Score one run: exact-match and per-cell accuracy per band."""
    _, suite = read_run(run_dir)
    table = solved_table(suite.rows, read_results(run_dir / RESULTS_FILE))
    bands = accuracy_by_band(table)
    score_folder(out)
    write_csv(table, out / "answers.csv", float_format="%.10g")
    write_csv(bands, out / "bands.csv", float_format="%.10g")
    records = json.loads(bands.to_json(orient="records"))
    write_json(out / "summary.json", {"family": "puzzle_solving", "bands": records})
    lines = [f"{len(table)} puzzle answers scored -> {out}"]
    for row in records:
        accuracy = "absent (no answered item)" if row["accuracy"] is None else f"{row['accuracy']:.1%}"
        lines.append(f"  {row['model']} {row['family']} {row['band']}: solved {accuracy} "
                     f"({row['solved']}/{row['answered']}; {row['abstained']} abstained)")
    return lines


def report(score_dir: Path, plots_dir: Path) -> Document:
    """The accuracy-per-band table."""
    summary = json.loads(read_bytes_capped(score_dir / "summary.json", DOCUMENT_BYTES))
    rows = [[_cell(record.get(column)) for column in COLUMNS] for record in summary["bands"]]
    return Document("Puzzle solving", [
        Heading("Accuracy per difficulty band"),
        Paragraph("Exact-match accuracy (every cell of the certified solution right; Wilson 95% interval) and "
                  "mean per-cell accuracy of the answered items, per model, puzzle family and band."),
        Table(COLUMNS, rows)])


def _cell(value: Any) -> str:
    if value is None:
        return "absent"
    return f"{value:.3f}" if isinstance(value, float) else str(value)
