"""What changed between two compiled suites: rows added, removed and changed (paired by cell), and the
manifest fields that differ.

Row ids hash the row's content, so an edited row has a new id. The ids are recomputed from the rows'
content, never taken as written: a row edited with its old id kept counts as changed, and its id is
named. Rows present in both (same id) are unchanged; the others are paired by their cell (in id order
within a cell) as changed rows, and what is left over is added or removed.
"""

from __future__ import annotations

import dataclasses
from collections import defaultdict
from typing import Any

from spec_audits.contract.reader import SUITE_FILE, Suite
from spec_audits.contract.seeding import canonical_json
from spec_audits.contract.suite_model import SuiteRow
from spec_audits.contract.writer import content_id

SHOWN = 10
"""Rows listed per kind of change; the rest are counted."""
FIELDS = ("messages", "samples", "answers", "decode", "puzzle", "followups", "expect", "meta")


def by_content(suite: Suite) -> tuple[Suite, list[str]]:
    """`suite` with every row's id recomputed from its content, and each row whose written id differed."""
    rows, named = [], []
    for number, row in enumerate(suite.rows, start=1):
        fresh = content_id(row)
        if fresh != row.id:
            named.append(f"{suite.path / SUITE_FILE} (row {number}, id {row.id}): the id does not match the row's "
                         f"content, which hashes to {fresh}; the row is compared by its content")
            row = row.model_copy(update={"id": fresh})
        rows.append(row)
    return dataclasses.replace(suite, rows=rows), named


def _by_cell(rows: list[SuiteRow]) -> dict[str, list[SuiteRow]]:
    cells: dict[str, list[SuiteRow]] = defaultdict(list)
    for row in rows:
        cells[canonical_json(row.cell)].append(row)
    return cells


def _cell(row: SuiteRow) -> str:
    return " ".join(f"{key}={value}" for key, value in row.cell.items())


def pair_rows(a: Suite, b: Suite) -> tuple[list[SuiteRow], list[SuiteRow], list[tuple[SuiteRow, SuiteRow]]]:
    """Rows only in b (added), only in a (removed), and (a row, b row) pairs with the same cell (changed)."""
    common = {row.id for row in a.rows} & {row.id for row in b.rows}
    old = _by_cell([row for row in a.rows if row.id not in common])
    new = _by_cell([row for row in b.rows if row.id not in common])
    added, removed, changed = [], [], []
    for cell in sorted(old.keys() | new.keys()):
        before, after = old.get(cell, []), new.get(cell, [])
        changed += list(zip(before, after, strict=False))
        removed += before[len(after):]
        added += after[len(before):]
    return added, removed, changed


def _flat(value: Any, prefix: str = "") -> dict[str, Any]:
    if isinstance(value, dict) and value:
        return {k: v for key, item in value.items() for k, v in _flat(item, f"{prefix}{key}.").items()}
    return {prefix.rstrip("."): value}


def manifest_changes(a: Suite, b: Suite) -> list[str]:
    """Each manifest field (nested ones by dotted path) whose value differs, as `field: old -> new`."""
    old, new = _flat(a.manifest.model_dump(mode="json")), _flat(b.manifest.model_dump(mode="json"))
    return [f"{key}: {canonical_json(old.get(key))} -> {canonical_json(new.get(key))}"
            for key in sorted(old.keys() | new.keys()) if old.get(key) != new.get(key)]


def _listed(title: str, lines: list[str]) -> list[str]:
    more = len(lines) - SHOWN
    return [f"{title}:", *(f"  {line}" for line in lines[:SHOWN]), *([f"  ... and {more} more"] if more > 0 else [])]


def diff_lines(a: Suite, b: Suite) -> list[str]:
    """The report `spec diff` prints: counts first, then the rows and manifest fields that differ."""
    added, removed, changed = pair_rows(a, b)
    fields = manifest_changes(a, b)
    lines = [f"rows: {len(a.rows)} -> {len(b.rows)}: {len(added)} added, {len(removed)} removed, "
             f"{len(changed)} changed, {len(a.rows) - len(removed) - len(changed)} unchanged",
             f"manifest: {len(fields)} fields changed"]
    if added:
        lines += _listed("added", [f"{row.id} ({_cell(row)})" for row in added])
    if removed:
        lines += _listed("removed", [f"{row.id} ({_cell(row)})" for row in removed])
    if changed:
        lines += _listed("changed", [
            f"{x.id} -> {y.id} ({_cell(x)}): {', '.join(f for f in FIELDS if getattr(x, f) != getattr(y, f))}"
            for x, y in changed])
    if fields:
        lines += _listed("manifest fields", fields)
    return lines
