"""Load a compiled suite folder and validate it, with errors that name the file and line."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

from pydantic import ValidationError

from compiler.suite_model import Manifest, SuiteRow


class SuiteError(ValueError):
    """A compiled suite that cannot be run; the message names the file (and line) at fault."""


@dataclass(frozen=True)
class Suite:
    """A validated compiled suite."""

    path: Path
    manifest: Manifest
    manifest_sha256: str
    rows: list[SuiteRow]

    @property
    def strata(self) -> list[str] | None:
        """The cell keys a --limit subset is stratified over: the suite's balance keys, if any."""
        return self.manifest.balance[0].keys if self.manifest.balance else None


def _short(err: ValidationError) -> str:
    first = err.errors()[0]
    where = ".".join(str(p) for p in first["loc"]) or "row"
    return f"{where}: {first['msg']}" + (f" (and {err.error_count() - 1} more)" if err.error_count() > 1 else "")


def load_manifest(folder: Path) -> tuple[Manifest, str]:
    """Read manifest.json; return it with the sha256 of its bytes."""
    path = folder / "manifest.json"
    if not path.is_file():
        raise SuiteError(f"{path}: not found (is {folder} a compiled suite folder?)")
    data = path.read_bytes()
    try:
        manifest = Manifest.model_validate_json(data)
    except ValidationError as err:
        raise SuiteError(f"{path}: {_short(err)}") from None
    return manifest, hashlib.sha256(data).hexdigest()


def _parse_row(path: Path, lineno: int, line: bytes) -> SuiteRow:
    try:
        row = SuiteRow.model_validate_json(line)
    except ValidationError as err:
        raise SuiteError(f"{path}:{lineno}: {_short(err)}") from None
    if not row.answers:
        raise SuiteError(f"{path}:{lineno}: row {row.id} has no valid answers")
    if not row.messages:
        raise SuiteError(f"{path}:{lineno}: row {row.id} has no messages")
    return row


def load_rows(path: Path) -> list[SuiteRow]:
    """Read suite.jsonl; every line must be a valid SuiteRow with a unique id."""
    if not path.is_file():
        raise SuiteError(f"{path}: not found")
    rows: list[SuiteRow] = []
    seen: set[str] = set()
    with path.open("rb") as fh:
        for lineno, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            row = _parse_row(path, lineno, line)
            if row.id in seen:
                raise SuiteError(f"{path}:{lineno}: duplicate id {row.id}")
            seen.add(row.id)
            rows.append(row)
    if not rows:
        raise SuiteError(f"{path}: no rows")
    return rows


def load_suite(folder: Path | str) -> Suite:
    """Load and validate a compiled suite folder (manifest.json + suite.jsonl)."""
    folder = Path(folder)
    if not folder.is_dir():
        raise SuiteError(f"{folder}: not a folder")
    manifest, sha = load_manifest(folder)
    rows = load_rows(folder / "suite.jsonl")
    if manifest.rows != len(rows):
        raise SuiteError(f"{folder / 'manifest.json'}: says rows={manifest.rows}, suite.jsonl has {len(rows)}")
    return Suite(path=folder, manifest=manifest, manifest_sha256=sha, rows=rows)
