"""Scoring input shared by every family: the error for bad scoring input (exit status 1 with a message
naming file, row and column, never a traceback) and which family a run belongs to. The run and suite
files themselves are read by spec_audits.contract.reader."""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import click

from spec_audits.base import exits
from spec_audits.base.safe_files import DOCUMENT_BYTES, read_bytes_capped
from spec_audits.contract.analysis_record import NOT_OURS, AnalysisRecord, read_analysis, shown
from spec_audits.contract.reader import (
    MANIFEST_FILE,
    RESULTS_FILE,
    ContractError,
    read_manifest,
    read_run_info,
    suite_dir_of,
)
from spec_audits.runner.unread import has_scorable, unread


class ScoreInputError(click.ClickException):
    """Bad scoring input (exit 1). The message names the file and, where known, the row and column."""

    def __init__(self, path: Path | str, problem: str, *, row: int | None = None, column: str | None = None):
        where = str(path)
        if row is not None:
            where += f", row {row}"
        if column is not None:
            where += f", column {column!r}"
        super().__init__(f"{where}: {problem}")


class NoUsableData(click.ClickException):
    """Runs with nothing to score (exit 5): every statistic would be absent."""

    exit_code = exits.NO_DATA


def require_answers(runs: list[Path], replies: bool = False) -> None:
    """Refuse runs none of which holds a scorable answer (every call failed, or every reply was unreadable),
    before any statistics file is written. A run's first scorable row ends the look at once. With `replies`
    (a family whose scorer reads each reply itself) a successful reply counts though the runner read none."""
    if any(has_scorable(run / RESULTS_FILE, replies) for run in runs):
        return
    from spec_audits.runner.result_checks import read_unique_results  # it raises this module's ScoreInputError

    rows = [row for run in runs for row in read_unique_results(run / RESULTS_FILE).rows]  # no failure counted twice
    failed = [row.error for row in rows if row.error is not None]
    example = f"; the first failed with: {failed[0]}" if failed else ""
    names = ", ".join(str(run) for run in runs)
    found = unread(rows)
    if found.count:
        also = f"; {len(failed)} failed" if failed else ""
        raise NoUsableData(f"{names}: no scorable answer: {found.describe()}{also}, so nothing to score. Read the "
                           "replies in results.jsonl: the answer form, the prompt's instructions or max_tokens may "
                           "not fit this model")
    raise NoUsableData(f"{names}: no answered item ({len(failed)} failed{example}), so nothing to score. Fix the "
                       "cause, then rerun `spec run` with --retry-failed")


def run_family(run_dir: Path, default: str) -> str:
    """The analysis family a run's suite declares (manifest.analysis.family), `default` when it declares none."""
    folder = suite_dir_of(run_dir, read_run_info(run_dir))
    manifest, _ = read_manifest(folder)
    family = (manifest.analysis or {}).get("family", default)
    if not isinstance(family, str):
        raise ContractError(folder / MANIFEST_FILE, f"analysis.family: must be a family's name, got {shown(family)}",
                            fix=NOT_OURS)
    return family


def check_run_analysis(run_dir: Path, record: type[AnalysisRecord]) -> None:
    """The run's suite's manifest.analysis is what its family's compile writes (the scorer trusts nothing else)."""
    read_analysis(suite_dir_of(run_dir, read_run_info(run_dir)), record)


def read_score_folder(score_dir: Path, table: str) -> tuple[Path, dict[str, Any]]:
    """A `spec score` folder's main table (its path, checked to exist) and summary.json, for a report."""
    path = score_dir / table
    if not path.is_file():
        raise ScoreInputError(path, "file not found (run `spec score` first)")
    return path, json.loads(read_bytes_capped(score_dir / "summary.json", DOCUMENT_BYTES))


def check_study_runs(run_dirs: list[Path], manifests: list[Any], models: list[Iterable[str]]) -> None:
    """Runs scored together (a study, one model each) must be of one suite (equal manifests) and no model
    may answer in two of them: a located error otherwise."""
    seen: dict[str, Path] = {}
    for run_dir, manifest, answered in zip(run_dirs, manifests, models, strict=True):
        if manifest != manifests[0]:
            raise ScoreInputError(run_dir / "run.json", f"is a run of another suite than {run_dirs[0]}: "
                                  "score each suite separately")
        for model in answered:
            if model in seen:
                raise ScoreInputError(run_dir, f"answers with {model}, as {seen[model]} does; "
                                      "merge shards with spec merge before scoring")
            seen[model] = run_dir
