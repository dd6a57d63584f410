"""Scoring input shared by every family: the error for bad scoring input (exit status 1 with a message
naming file, row and column, never a traceback) and which family a run belongs to. The run and suite
files themselves are read by runner.contract."""

from __future__ import annotations

from pathlib import Path

import click

from runner.contract import read_manifest, read_run_info, suite_dir_of


class ScoreInputError(click.ClickException):
    """Bad scoring input (exit 1). The message names the file and, where known, the row and column."""

    def __init__(self, path: Path | str, problem: str, *, row: int | None = None, column: str | None = None):
        where = str(path)
        if row is not None:
            where += f", row {row}"
        if column is not None:
            where += f", column {column!r}"
        super().__init__(f"{where}: {problem}")


def run_family(run_dir: Path, default: str) -> str:
    """The analysis family a run's suite declares (manifest.analysis.family), `default` when it declares none."""
    info = read_run_info(run_dir)
    manifest, _ = read_manifest(suite_dir_of(run_dir, info))
    return str((manifest.analysis or {}).get("family", default))
