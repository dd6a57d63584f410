"""What every `spec import` adapter shares: reading another harness's JSON lines with their line numbers, the
located error for a line it cannot map, and writing the run folders it makes (results.jsonl + run.json
pointing at the compiled suite the lines were matched against), never half-written.

Family-blind: adapters live with their families (Family.importers) and call these helpers.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import shutil
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import click

from spec_audits.base.safe_files import iter_lines_capped, open_regular
from spec_audits.contract.reader import RESULTS_FILE, Suite
from spec_audits.contract.results_model import ResultRow, RunInfo
from spec_audits.runner.results_io import result_line, write_run_info
from spec_audits.runner.study import STUDY_FILE, record_study, slug

GZIP_MAGIC = b"\x1f\x8b"


class ImportInputError(click.ClickException):
    """A line or file an adapter cannot map (exit 1): `path[:line]: problem`."""

    def __init__(self, path: Path | str, problem: str, *, line: int | None = None) -> None:
        where = str(path) if line is None else f"{path}:{line}"
        super().__init__(f"{where}: {problem}")


def json_lines(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, object) for every non-blank line of a JSON-lines file, gzip-compressed or not."""
    try:
        with open_regular(path) as raw:
            compressed = raw.read(2) == GZIP_MAGIC
            raw.seek(0)
            handle = gzip.GzipFile(fileobj=raw, mode="rb") if compressed else raw
            for number, line in enumerate(iter_lines_capped(handle, path), start=1):
                if line.strip():
                    yield number, _object(path, number, line.decode("utf-8"))
    except (OSError, EOFError, UnicodeDecodeError) as err:
        raise ImportInputError(path, f"cannot read it as JSON lines ({err})") from None


def _object(path: Path, number: int, line: str) -> dict[str, Any]:
    try:
        found = json.loads(line)
    except (ValueError, RecursionError) as err:
        raise ImportInputError(path, f"not a JSON object ({err})", line=number) from None
    if not isinstance(found, dict):
        raise ImportInputError(path, f"not a JSON object but {type(found).__name__}", line=number)
    return found


@dataclass
class ImportedRun:
    """The rows of one model (and reasoning setting) read from the files, and what was noted on the way."""

    model: str
    settings: dict[str, Any]
    rows: list[ResultRow] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def folder(self) -> str:
        reasoning = self.settings.get("reasoning")
        return slug(self.model) + (f"-reasoning-{slug(str(reasoning))}" if reasoning not in (None, "none") else "")


def write_runs(out: Path, suite: Suite, runs: list[ImportedRun]) -> list[Path]:
    """One run folder per imported run: OUT itself for one, a study folder (one run each) for several.
    Everything is written in a scratch folder beside OUT and renamed into place, so a failure leaves nothing."""
    if out.exists():
        raise click.ClickException(f"{out} exists: give --out a new folder (an import never overwrites a run)")
    out.parent.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=out.parent))
    try:
        if len(runs) == 1:
            _write_run(scratch, suite, runs[0])
            made = [out]
        else:
            names = _folders(runs)
            for run, name in zip(runs, names, strict=True):
                _write_run(scratch / name, suite, run)
            record_study(scratch, suite.path, names)
            made = [out / name for name in names]
        scratch.chmod(0o755)  # mkdtemp's folder is private; a run folder is not
        os.replace(scratch, out)
    except BaseException:
        shutil.rmtree(scratch, ignore_errors=True)
        raise
    return made


def _folders(runs: list[ImportedRun]) -> list[str]:
    """A study folder name per run: the model's slug, with a hash of the run's model and reasoning added where
    two runs' slugs agree (`a/m` and `b/m`) or one would be the study file, so no run overwrites another."""
    names = [run.folder for run in runs]
    return [name if names.count(name) == 1 and name != STUDY_FILE else
            f"{name}-{hashlib.sha256(repr((run.model, run.settings.get('reasoning'))).encode()).hexdigest()[:8]}"
            for run, name in zip(runs, names, strict=True)]


def _write_run(folder: Path, suite: Suite, run: ImportedRun) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    rows = sorted(run.rows, key=lambda r: (r.item_id, r.sample))
    (folder / RESULTS_FILE).write_bytes(b"".join(map(result_line, rows)))
    now = datetime.now(UTC).isoformat(timespec="seconds")
    failed = sum(row.error is not None for row in rows)
    info = RunInfo(suite_dir=str(suite.path), suite_manifest_sha256=suite.manifest_sha256, model=run.model,
                   mode="sample", settings=run.settings, notes=run.notes, started=now, ended=now,
                   planned=len(rows), done=len(rows) - failed, failed=failed)
    write_run_info(folder, info)
