"""`data NAME from "file.csv" key ID[, ID2 ...] [where EXPR] [min_count N over FIELD, ...]
[sample N [per FIELD] [seed S]] [map new = old] [parse COLUMN as FORMAT, ...]`.

Reads the rows of a data source with located errors, parses the declared columns (compiler/data_parse.py),
then filters them with `where` (column values are text) and keeps a seeded sample: each row's rank is
hashed from (seed, source, key), so adding rows to the file never reshuffles the ones already chosen.
A key of several columns identifies a row by their values together.
"""

from __future__ import annotations

import codecs
import io
from collections import Counter
from pathlib import Path
from typing import Any

from spec_audits.compiler import nodes as n
from spec_audits.compiler.data_parse import PARSERS, ParseFailure
from spec_audits.compiler.errors import ErrorCollector, Span, did_you_mean
from spec_audits.compiler.expr import evaluate, names
from spec_audits.compiler.files import checked_path
from spec_audits.compiler.load import display_path
from spec_audits.contract.seeding import item_rng


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


def first_key(source: n.DataSource) -> str:
    """The first key column (families whose items are keyed by one column read only this)."""
    return source.key[0] if source.key else ""


def key_of(source: n.DataSource, row: Row) -> str:
    """The row's key: its key columns' values joined by '|'."""
    return "|".join(str(row[column]) for column in source.key)


def read_rows(source: n.DataSource, required: tuple[str, ...], seed: int, errors: ErrorCollector) -> list[Row] | None:
    """The CSV rows of `source` (path relative to the spec that declares it), keyed by its `key` column,
    with `map` renames applied, filtered and sampled; None after reporting a missing file or column, a
    duplicate key, a bad filter or a sample larger than the rows it draws from."""
    before = len(errors.diagnostics)
    path = checked_source(source, errors)
    if len(errors.diagnostics) > before or path is None:
        return None
    rows = _read(source, path, errors)
    if rows is None or not _parsed(source, rows, errors):
        return None
    rows = _checked(source, rows, required, errors)
    if rows is None:
        return None
    rows = _filtered(source, rows, errors)
    rows = None if rows is None else _common(source, rows, errors)
    return None if rows is None else _sampled(source, rows, seed, errors)


def checked_source(source: n.DataSource, errors: ErrorCollector) -> Path | None:
    """The data file's path, or None after reporting a missing key, a file that is not CSV, a path that may
    not be read or one that does not exist. The shared checks run this on every data source, so a bad path
    is reported with the design's other mistakes (and again, identically, when a design reads it)."""
    if not source.key:
        errors.add(source.span, f"data '{source.name}' names no key column", "add: key id")
    if not source.path.value.lower().endswith(".csv"):
        errors.add(source.path.span, f"data '{source.name}': only CSV files are read, got '{source.path.value}'")
    path = checked_path(Path(source.span.file).parent, source.path.value, source.path.span, "data file", errors)
    if path is not None and not path.exists():
        _not_found(source, errors)
        return None
    return path


def _not_found(source: n.DataSource, errors: ErrorCollector) -> None:
    errors.add(source.path.span, f"data file not found: '{source.path.value}'",
               f"paths are relative to the spec's folder ({display_path(Path(source.span.file).parent) or '.'})")


def _read(source: n.DataSource, path: Path, errors: ErrorCollector) -> list[Row] | None:
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        _not_found(source, errors)
        return None
    except OSError as err:
        errors.add(source.path.span, f"cannot read data file '{source.path.value}': {err.strerror}")
        return None
    bom = len(codecs.BOM_UTF8) if data.startswith(codecs.BOM_UTF8) else 0
    try:
        text = data[bom:].decode("utf-8")
    except UnicodeDecodeError as err:
        offset = bom + err.start
        errors.add(source.path.span, f"data file '{source.path.value}' is not UTF-8 text: byte 0x{data[offset]:02x} "
                   f"at offset {offset} cannot be decoded", "save it as UTF-8")
        return None
    return _records(source, text, display_path(path) or str(path), errors)


def _records(source: n.DataSource, text: str, file: str, errors: ErrorCollector) -> list[Row] | None:
    """The rows of a CSV text; a ragged line, an unterminated quote or a repeated column is an error
    (naming the CSV's line, never quoting it: the file is not the spec)."""
    import csv  # only a spec that reads a CSV file needs it

    where = f"data file '{source.path.value}'"
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    try:
        header = next(reader, [])
        records, start = [], reader.line_num + 1
        for record in reader:  # each record with the line it starts on (a quoted cell may span lines)
            if record:
                records.append((start, record))
            start = reader.line_num + 1
    except csv.Error as err:
        errors.add(source.path.span, f"{where}: line {reader.line_num}: {err}",
                   "close every quoted field with a double quote")
        return None
    repeated = sorted({column for column in header if header.count(column) > 1})
    ragged = next(((line, len(r)) for line, r in records if len(r) != len(header)), None)
    if repeated:
        errors.add(source.path.span, f"{where}: the header names column '{repeated[0]}' twice")
    elif ragged is not None:
        errors.add(source.path.span, f"{where}: line {ragged[0]} has {ragged[1]} fields, the header has {len(header)}",
                   "every line needs one field per column; quote fields that contain commas")
    elif not records:
        errors.add(source.path.span, f"{where} has no rows")
    missing = [old for old in source.mapping.values() if old not in header]
    for old in missing:
        errors.add(source.span, f"data '{source.name}': 'map' reads column '{old}', which {where} lacks",
                   did_you_mean(old, header))
    if repeated or ragged is not None or not records or missing:
        return None
    rows = []
    for number, (line, record) in enumerate(records, start=1):
        values = dict(zip(header, record, strict=True))
        rows.append(Row({new: values[old] for new, old in source.mapping.items()} | values, number, line, file))
    return rows


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


def _common(source: n.DataSource, rows: list[Row], errors: ErrorCollector) -> list[Row] | None:
    """`min_count N over F, G`: drop every row in which a value of F or G occurs fewer than N times (counted
    over F and G together), again and again until every value left occurs at least N times."""
    if source.min_count is None:
        return rows
    least, fields = source.min_count
    for field in fields:
        if field not in rows[0]:
            errors.add(source.span, f"data '{source.name}': no column '{field}' to count", did_you_mean(field, rows[0]))
            return None
    while True:
        counts = Counter(row[field] for row in rows for field in fields)
        kept = [row for row in rows if all(counts[row[field]] >= least for field in fields)]
        if len(kept) == len(rows):
            break
        rows = kept
    if not rows:
        errors.add(source.span, f"data '{source.name}': no row is left once values occurring fewer than "
                   f"{least} times are dropped", "lower the count or widen the data")
        return None
    return rows


def _sampled(source: n.DataSource, rows: list[Row], seed: int, errors: ErrorCollector) -> list[Row] | None:
    if source.sample is None:
        return rows
    if source.sample < 1:
        errors.add(source.span, f"data '{source.name}': sample needs a count >= 1, got {source.sample}",
                   "sample N keeps N rows (per group with 'per')")
        return None
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
