"""Reading a run for scoring, shared by every family: user-facing input errors (exit status 1 with a
message naming file, row and column, never a traceback), run.json and manifest models, the suite folder."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click
from pydantic import ValidationError

from compiler.suite_model import Manifest
from runner.results_model import RunInfo


class ScoreInputError(click.ClickException):
    """Bad scoring input (exit 1). The message names the file and, where known, the row and column."""

    def __init__(self, path: Path | str, problem: str, *, row: int | None = None, column: str | None = None):
        where = str(path)
        if row is not None:
            where += f", row {row}"
        if column is not None:
            where += f", column {column!r}"
        super().__init__(f"{where}: {problem}")


def read_model(path: Path, model: type[Any]) -> Any:
    try:
        return model.model_validate_json(path.read_bytes())
    except FileNotFoundError as exc:
        raise ScoreInputError(path, "file not found") from exc
    except ValidationError as exc:
        error = exc.errors()[0]
        column = ".".join(str(p) for p in error["loc"]) or None
        raise ScoreInputError(path, error["msg"], column=column) from exc


def suite_dir_of(run_dir: Path, suite_dir: str) -> Path:
    """suite_dir as written, else relative to the run folder."""
    for candidate in (Path(suite_dir), run_dir / suite_dir):
        if (candidate / "manifest.json").is_file():
            return candidate
    raise ScoreInputError(run_dir / "run.json", f"suite folder {suite_dir!r} not found", column="suite_dir")


def run_family(run_dir: Path, default: str) -> str:
    """The analysis family a run's suite declares (manifest.analysis.family), `default` when it declares none."""
    info: RunInfo = read_model(run_dir / "run.json", RunInfo)
    manifest: Manifest = read_model(suite_dir_of(run_dir, info.suite_dir) / "manifest.json", Manifest)
    return str((manifest.analysis or {}).get("family", default))
