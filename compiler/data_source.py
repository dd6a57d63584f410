"""`data NAME from "file.csv" key ID [map new = old]`: read the rows of a data source, located errors."""

from __future__ import annotations

import csv
from pathlib import Path

from compiler import nodes as n
from compiler.errors import ErrorCollector, did_you_mean
from compiler.load import display_path

Row = dict[str, str]


def read_rows(source: n.DataSource, required: tuple[str, ...], errors: ErrorCollector) -> list[Row] | None:
    """The CSV rows of `source` (path relative to the spec that declares it), keyed by its `key` column,
    with `map` renames applied; None after reporting a missing file, column or duplicate key."""
    before = len(errors.diagnostics)
    if source.where is not None or source.sample is not None:
        errors.add(source.span, f"data '{source.name}': 'where' and 'sample' are not compiled by this version",
                   "filter or sample the CSV file itself")
    if source.key is None:
        errors.add(source.span, f"data '{source.name}' names no key column", "add: key id")
    path = Path(source.span.file).parent / source.path.value
    if path.suffix.lower() != ".csv":
        errors.add(source.path.span, f"data '{source.name}': only CSV files are read, got '{source.path.value}'")
    if len(errors.diagnostics) > before:
        return None
    rows = _read(source, path, errors)
    if rows is None:
        return None
    return _checked(source, rows, required, errors)


def _read(source: n.DataSource, path: Path, errors: ErrorCollector) -> list[Row] | None:
    try:
        with path.open(encoding="utf-8", newline="") as handle:
            rows = list(csv.DictReader(handle))
    except FileNotFoundError:
        errors.add(source.path.span, f"data file not found: '{source.path.value}'",
                   f"paths are relative to the spec's folder ({display_path(Path(source.span.file).parent) or '.'})")
        return None
    except UnicodeDecodeError:
        errors.add(source.path.span, f"data file '{source.path.value}' is not UTF-8 text", "save it as UTF-8")
        return None
    except (OSError, csv.Error) as err:
        errors.add(source.path.span, f"cannot read data file '{source.path.value}': {err}")
        return None
    if not rows:
        errors.add(source.path.span, f"data file '{source.path.value}' has no rows")
        return None
    return [{new: row.get(old, "") for new, old in source.mapping.items()} | _clean(row) for row in rows]


def _clean(row: dict[str | None, str | list[str] | None]) -> Row:
    """Drop the overflow of ragged lines (csv puts it under None) and fill short lines with ''."""
    return {key: value if isinstance(value, str) else "" for key, value in row.items() if key is not None}


def _checked(source: n.DataSource, rows: list[Row], required: tuple[str, ...],
             errors: ErrorCollector) -> list[Row] | None:
    columns = set(rows[0])
    key = source.key or ""
    before = len(errors.diagnostics)
    for column in (key, *required):
        if column not in columns:
            errors.add(source.span, f"data file '{source.path.value}' has no column '{column}'",
                       did_you_mean(column, columns))
    if len(errors.diagnostics) > before:
        return None
    seen: set[str] = set()
    for number, row in enumerate(rows, start=1):
        if not row[key] or row[key] in seen:
            what = "an empty" if not row[key] else f"a repeated ('{row[key]}')"
            errors.add(source.span, f"data file '{source.path.value}': row {number} has {what} key '{key}'",
                       "every row needs its own key")
            return None
        seen.add(row[key])
    return rows
