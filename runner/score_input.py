"""Scoring input shared by every family: the error for bad scoring input (exit status 1 with a message
naming file, row and column, never a traceback) and which family a run belongs to. The run and suite
files themselves are read by spec_audits.contract.reader.

And one rule for every reader that counts answers: a results.jsonl row that repeats an earlier row's (item, sample)
is refused, whatever either holds (`refuse_repeats`, `read_unique_results`). spec run never writes one (a resume
rewrites the file without repeats before it appends, and --retry-failed removes the failed rows first; merge and
import write one row each), so a repeat is a file joined or edited by hand, which no rule could read without
guessing which row counts. The message names both rows and `spec merge`, which keeps one row of each."""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import click
import numpy as np

from spec_audits.base import exits
from spec_audits.base.safe_files import DOCUMENT_BYTES, read_bytes_capped
from spec_audits.contract.analysis_record import NOT_OURS, AnalysisRecord, read_analysis, shown
from spec_audits.contract.reader import (
    MANIFEST_FILE,
    RESULTS_FILE,
    ContractError,
    ResultsFile,
    iter_numbered_results,
    read_manifest,
    read_results_file,
    read_run_info,
    suite_dir_of,
)
from spec_audits.contract.results_model import ResultRow
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
    rows = [row for run in runs for row in scored_results(run / RESULTS_FILE)]  # no failure counted twice
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


REPEAT_FIX = ("a results file holds one row per (item, sample), and spec run never writes two; if the file joins "
              "a retry or shards by hand, `spec merge RUN --out NEW` keeps one row of each (the last answer; an "
              "answer beats a failure)")


def read_unique_results(path: Path) -> ResultsFile:
    """The rows of results.jsonl (`read_results_file`), one at most per (item, sample): a repeat is refused."""
    found = read_results_file(path)
    codes: dict[str, int] = {}
    items = np.array([codes.setdefault(row.item_id, len(codes)) for row in found.rows], dtype=np.int64)
    samples = np.array([row.sample for row in found.rows], dtype=np.int64)
    refuse_repeats(path, repeated(sample_keys(items, samples)), np.array(found.lines, dtype=np.int64))
    return found


def scored_results(path: Path) -> list[ResultRow]:
    """The rows of results.jsonl as a family's scorer reads them (the SDK's `read_results`): a repeat is refused."""
    return read_unique_results(path).rows


def sample_keys(items: np.ndarray, samples: np.ndarray) -> np.ndarray:
    """A key per row for its (item, sample), from its item's code (below 2**31: a suite position) and its sample,
    taken by rank where one is 2**31 or more: a stranger's sample of 2**62 cannot overflow the key and make two rows'
    keys one."""
    top = int(samples.max(initial=0))
    if top >= 1 << 31:
        _, rank = np.unique(samples, return_inverse=True)
        samples, top = rank.ravel(), int(rank.max())
    keys: np.ndarray = items.astype(np.int64) * (top + 1) + samples
    return keys


def repeated(values: np.ndarray) -> np.ndarray:
    """Whether each value repeats an earlier one (pandas' duplicated, by a sort instead of a hash table)."""
    order = np.argsort(values, kind="stable")
    again = np.zeros(len(values), dtype=bool)
    again[order[1:][values[order[1:]] == values[order[:-1]]]] = True
    return again


def refuse_repeats(path: Path, again: np.ndarray, lines: np.ndarray) -> None:
    """Refuse the first row flagged in `again` (it repeats an earlier row's (item, sample); `lines`: the rows'
    line numbers), naming both rows."""
    if again.any():
        raise repeat_error(path, int(lines[int(np.flatnonzero(again)[0])]))


def repeat_error(path: Path, line: int) -> ScoreInputError:
    """The error for row `line` of results.jsonl `path`, the first to repeat an earlier row's (item, sample). The
    file is read again to find that row: a scorer keeps no row's id, and this is the path of an error only."""
    later = next(row for _, number, row in iter_numbered_results(path) if number == line)
    earlier, first = next((number, row) for _, number, row in iter_numbered_results(path)
                          if (row.item_id, row.sample) == (later.item_id, later.sample))
    kinds = " then ".join("failed" if row.error is not None else "answered" for row in (first, later))
    return ScoreInputError(path, f"item {later.item_id!r} sample {later.sample} again: row {earlier} holds it "
                           f"already ({kinds}); {REPEAT_FIX}", row=line, column="sample")
