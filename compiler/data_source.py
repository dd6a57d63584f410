"""`data NAME from "file.csv" key ID[, ID2 ...] [where EXPR] [sample N [per FIELD] [seed S]] [map new = old]
[parse COLUMN as FORMAT, ...]`.

Reads the rows of a data source with located errors, parses the declared columns (compiler/data_parse.py),
then filters them with `where` (column values are text) and keeps a seeded sample: each row's rank is
hashed from (seed, source, key), so adding rows to the file never reshuffles the ones already chosen.
A key of several columns identifies a row by their values together.
"""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any

from compiler import nodes as n
from compiler.data_parse import PARSERS, ParseFailure
from compiler.errors import ErrorCollector, Span, did_you_mean
from compiler.expr import evaluate, names
from compiler.load import display_path
from compiler.seeding import item_rng


class Row(dict[str, Any]):
    """One data row (column -> text, or the parsed value of a `parse` column) and where it sits in its file."""

    def __init__(self, values: dict[str, Any], number: int, line: int, file: str) -> None:
        super().__init__(values)
        self.number, self.line, self.file = number, line, file

    def span(self, column: str) -> Span:
        """The cell, as file:line:column (its record's first line; the column's position in the header)."""
        names = list(self)
        return Span(self.file, self.line, names.index(column) + 1 if column in names else 1)

    def where(self, column: str) -> str:
        return f"data file '{self.file}': row {self.number}, column '{column}'"


def key_of(source: n.DataSource, row: Row) -> str:
    """The row's key: its key columns' values joined by '|'."""
    return "|".join(str(row[column]) for column in source.key)


def read_rows(source: n.DataSource, required: tuple[str, ...], seed: int, errors: ErrorCollector) -> list[Row] | None:
    """The CSV rows of `source` (path relative to the spec that declares it), keyed by its `key` column,
    with `map` renames applied, filtered and sampled; None after reporting a missing file or column, a
    duplicate key, a bad filter or a sample larger than the rows it draws from."""
    before = len(errors.diagnostics)
    if not source.key:
        errors.add(source.span, f"data '{source.name}' names no key column", "add: key id")
    path = Path(source.span.file).parent / source.path.value
    if path.suffix.lower() != ".csv":
        errors.add(source.path.span, f"data '{source.name}': only CSV files are read, got '{source.path.value}'")
    if len(errors.diagnostics) > before:
        return None
    rows = _read(source, path, errors)
    if rows is None:
        return None
    rows = _checked(source, rows, required, errors)
    if rows is None or not _parsed(source, rows, errors):
        return None
    rows = _filtered(source, rows, errors)
    return None if rows is None else _sampled(source, rows, seed, errors)


def _read(source: n.DataSource, path: Path, errors: ErrorCollector) -> list[Row] | None:
    try:
        with path.open(encoding="utf-8", newline="") as handle:
            rows = _records(csv.DictReader(handle), display_path(path) or str(path), source)
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
    return rows


def _records(reader: csv.DictReader, file: str, source: n.DataSource) -> list[Row]:
    """The rows with their numbers and the file line each starts on (a quoted cell may span lines)."""
    reader.fieldnames  # noqa: B018 - reads the header, so line_num counts the header's lines
    rows, line = [], reader.line_num + 1
    for number, raw in enumerate(reader, start=1):
        values = {new: raw.get(old, "") for new, old in source.mapping.items()} | _clean(raw)
        rows.append(Row(values, number, line, file))
        line = reader.line_num + 1
    return rows


def _clean(row: dict[str | None, str | list[str] | None]) -> dict[str, str]:
    """Drop the overflow of ragged lines (csv puts it under None) and fill short lines with ''."""
    return {key: value if isinstance(value, str) else "" for key, value in row.items() if key is not None}


def _checked(source: n.DataSource, rows: list[Row], required: tuple[str, ...],
             errors: ErrorCollector) -> list[Row] | None:
    columns = set(rows[0])
    before = len(errors.diagnostics)
    for column in (*source.key, *source.parse, *required):
        if column not in columns:
            errors.add(source.span, f"data file '{source.path.value}' has no column '{column}'",
                       did_you_mean(column, columns))
    if len(errors.diagnostics) > before:
        return None
    seen: set[str] = set()
    key = ", ".join(source.key)
    for row in rows:
        value = key_of(source, row)
        if not all(row[column] for column in source.key) or value in seen:
            what = "an empty" if not all(row[column] for column in source.key) else f"a repeated ('{value}')"
            errors.add(source.span, f"data file '{source.path.value}': row {row.number} has {what} key '{key}'",
                       "every row needs its own key")
            return None
        seen.add(value)
    return rows


def _parsed(source: n.DataSource, rows: list[Row], errors: ErrorCollector) -> bool:
    """Parse each `parse` column in place; every cell that fails is reported at its file, row and column."""
    before = len(errors.diagnostics)
    for column, fmt in source.parse.items():
        parser = PARSERS.get(fmt)
        if parser is None:
            errors.add(source.span, f"data '{source.name}': unknown format '{fmt}' for column '{column}'",
                       did_you_mean(fmt, PARSERS))
            continue
        for row in rows:
            try:
                row[column] = parser(row[column])
            except ParseFailure as err:
                errors.add(row.span(column), f"{row.where(column)}: {err}")
    return len(errors.diagnostics) == before


def _filtered(source: n.DataSource, rows: list[Row], errors: ErrorCollector) -> list[Row] | None:
    if source.where is None:
        return rows
    columns = set(rows[0])
    unknown = [name for name in names(source.where) if len(name.parts) != 1 or name.parts[0] not in columns]
    for name in unknown:
        errors.add(name.span, f"data '{source.name}': no column '{name.dotted}' to filter on",
                   did_you_mean(name.dotted, columns))
    if unknown:
        return None
    try:
        kept = [row for row in rows if evaluate(source.where, row)]
    except TypeError:
        errors.add(source.where.span, f"data '{source.name}': the filter compares text with a number",
                   'column values are text: compare them with quoted strings, e.g. year == "2020"')
        return None
    if not kept:
        errors.add(source.where.span, f"data '{source.name}': the filter keeps no row")
        return None
    return kept


def _sampled(source: n.DataSource, rows: list[Row], seed: int, errors: ErrorCollector) -> list[Row] | None:
    if source.sample is None:
        return rows
    per = source.sample_per
    if per is not None and per not in rows[0]:
        errors.add(source.span, f"data '{source.name}': no column '{per}' to sample per", did_you_mean(per, rows[0]))
        return None
    groups: dict[str, list[Row]] = {}
    for row in rows:
        groups.setdefault(row[per] if per else "", []).append(row)
    draw_seed = source.sample_seed if source.sample_seed is not None else seed
    chosen: set[str] = set()
    for value, members in groups.items():
        if len(members) < source.sample:
            where = f" with {per} = '{value}'" if per else ""
            errors.add(source.span, f"data '{source.name}': cannot sample {source.sample} rows{where}: "
                       f"only {len(members)} there", "lower the sample size or loosen the filter")
            return None
        ranked = sorted(members, key=lambda r: item_rng(draw_seed, source.name, key_of(source, r)).random())
        chosen.update(key_of(source, r) for r in ranked[: source.sample])
    return [row for row in rows if key_of(source, row) in chosen]
