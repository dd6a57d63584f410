"""The suite contract's writer: a row's id from its content, the suite folder's files and their hashes.

A row's id is the first 16 hex digits of the sha256 of its canonical JSON without `id`
(seeding.py); suite.jsonl holds the rows in id order; schema.json is SuiteRow's JSON
schema; manifest.json records every other file's sha256. The compiler's emit stage streams a large suite
through these (compiler/emit.py); converters, tests and benchmarks write small ones with write_suite_folder.
The reader (reader.py) checks all of it back.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from spec_audits.contract.seeding import canonical_json

if TYPE_CHECKING:  # the row models: `spec check` needs only row_id, never them
    from spec_audits.contract.suite_model import Manifest, SuiteRow

ID_HEX = 16
ROW_ID_BYTES = len('{"id":"",') + ID_HEX
"""What a suite.jsonl line adds to its row's canonical JSON: the id field (the newline takes the place of
the brace the id goes after)."""
ID_BYTES = ID_HEX // 2


def row_id(canonical_without_id: str) -> str:
    return hashlib.sha256(canonical_without_id.encode()).hexdigest()[:ID_HEX]


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def write_schema(folder: Path) -> None:
    from spec_audits.contract.suite_model import SuiteRow

    schema = SuiteRow.model_json_schema()
    (folder / "schema.json").write_text(json.dumps(schema, indent=2, sort_keys=True) + "\n", encoding="utf-8")


def write_manifest(folder: Path, fields: dict[str, Any], known: dict[str, str] | None = None) -> Manifest:
    """manifest.json with every file's sha256; `known` gives those already computed as they were written."""
    from spec_audits.contract.suite_model import Manifest

    known = known or {}
    files = {p.name: known.get(p.name) or file_sha256(p) for p in sorted(folder.iterdir()) if p.name != "manifest.json"}
    manifest = Manifest(**fields, files=files)
    text = json.dumps(manifest.model_dump(mode="json"), indent=2, sort_keys=True, ensure_ascii=False)
    (folder / "manifest.json").write_text(text + "\n", encoding="utf-8")
    return manifest


def content_id(row: SuiteRow) -> str:
    """The id `row`'s content gives: its fields as read (none added), without `id`, hashed as compiled."""
    return row_id(canonical_json(row.model_dump(mode="json", exclude={"id"}, exclude_unset=True)))


def suite_row(body: dict[str, Any]) -> SuiteRow:
    """A row with its content-derived id, from the row's fields without `id`."""
    from spec_audits.contract.suite_model import SuiteRow

    return SuiteRow(id=row_id(canonical_json(body)), **body)


def write_suite_folder(folder: Path, rows: Sequence[SuiteRow], **manifest: Any) -> Manifest:
    """A suite folder from rows built in code (tests, benchmarks, converters of other formats):
    suite.jsonl in id order, schema.json, and a manifest with counts and file hashes."""
    folder.mkdir(parents=True, exist_ok=True)
    ordered = sorted(rows, key=lambda r: r.id)
    lines = "".join(r.model_dump_json(exclude_none=True) + "\n" for r in ordered)
    (folder / "suite.jsonl").write_text(lines, encoding="utf-8")
    write_schema(folder)
    fields = {"rows": len(ordered), "trials": sum(r.samples for r in ordered), "cells": {}, **manifest}
    return write_manifest(folder, fields)
