"""User-facing input errors: exit status 1 with a message naming file, row and column, never a traceback."""

from __future__ import annotations

from pathlib import Path

import click


class ScoreInputError(click.ClickException):
    """Bad scoring input (exit 1). The message names the file and, where known, the row and column."""

    def __init__(self, path: Path | str, problem: str, *, row: int | None = None, column: str | None = None):
        where = str(path)
        if row is not None:
            where += f", row {row}"
        if column is not None:
            where += f", column {column!r}"
        super().__init__(f"{where}: {problem}")
