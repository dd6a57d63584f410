"""`spec score` and `spec report` of puzzle-solving runs: accuracy per model, puzzle family and difficulty
band (runner/puzzle_scores.py) -> bands.csv, answers.csv and summary.json; several runs of one suite (a
study, one model each) also get their paired differences (compare.py) -> comparisons.csv."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd

from spec_audits.contract.reader import RESULTS_FILE, read_results, read_run
from spec_audits.families.puzzle_solving.compare import model_comparisons
from spec_audits.runner.files_out import score_folder, write_csv, write_json
from spec_audits.runner.puzzle_scores import accuracy_by_band, solved_table
from spec_audits.runner.report.comparisons import comparison_blocks
from spec_audits.runner.report.document import Document, Heading, Paragraph, Table
from spec_audits.runner.score_input import ScoreInputError
from spec_audits.safe_files import DOCUMENT_BYTES, read_bytes_capped

ALPHA = 0.05  # the paired model comparisons' level and BH false discovery rate (the family reads no options)
COLUMNS = ["model", "family", "band", "items", "answered", "solved", "accuracy", "ci_low", "ci_high", "cell_accuracy",
           "abstained", "failed"]


def score(run_dir: Path, out: Path, options: dict[str, Any]) -> list[str]:
    """Score one run: exact-match and per-cell accuracy per band."""
    return score_runs([run_dir], out, options)


def score_runs(run_dirs: list[Path], out: Path, options: dict[str, Any]) -> list[str]:
    """Score runs of one suite together: accuracy per model and band, and each pair of models compared."""
    tables = [_table(run_dir, run_dirs[0]) for run_dir in run_dirs]
    seen: dict[str, Path] = {}
    for run_dir, own in zip(run_dirs, tables, strict=True):
        for model in own["model"].unique() if not own.empty else ():
            if model in seen:
                raise ScoreInputError(run_dir, f"answers with {model}, as {seen[model]} does; "
                                      "merge shards with spec merge before scoring")
            seen[model] = run_dir
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


def _table(run_dir: Path, first: Path) -> pd.DataFrame:
    """A run's solved table; a located error for a run of another suite than the first's."""
    _, suite = read_run(run_dir)
    if run_dir != first and read_run(first)[1].manifest != suite.manifest:
        raise ScoreInputError(run_dir / "run.json", f"is a run of another suite than {first}: "
                              "score each suite separately")
    return solved_table(suite.rows, read_results(run_dir / RESULTS_FILE))


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
