"""`data NAME from "file.csv" key ID [where EXPR] [min_count N over FIELD, ...] [sample N [per FIELD] [seed S]]
[map new = old]`.

Reads the rows of a data source with located errors, then filters them with `where` (column values are
text) and keeps a seeded sample: each row's rank is hashed from (seed, source, key), so adding rows to the
file never reshuffles the ones already chosen.
"""

from __future__ import annotations

import codecs
import csv
import io
from collections import Counter
from pathlib import Path

from compiler import nodes as n
from compiler.errors import ErrorCollector, did_you_mean
from compiler.expr import evaluate, names
from compiler.files import checked_path
from compiler.load import display_path
from compiler.seeding import item_rng

Row = dict[str, str]


def read_rows(source: n.DataSource, required: tuple[str, ...], seed: int, errors: ErrorCollector) -> list[Row] | None:
    """The CSV rows of `source` (path relative to the spec that declares it), keyed by its `key` column,
    with `map` renames applied, filtered and sampled; None after reporting a missing file or column, a
    duplicate key, a bad filter or a sample larger than the rows it draws from."""
    before = len(errors.diagnostics)
    if source.key is None:
        errors.add(source.span, f"data '{source.name}' names no key column", "add: key id")
    if not source.path.value.lower().endswith(".csv"):
        errors.add(source.path.span, f"data '{source.name}': only CSV files are read, got '{source.path.value}'")
    path = checked_path(Path(source.span.file).parent, source.path.value, source.path.span, "data file", errors)
    if len(errors.diagnostics) > before or path is None:
        return None
    rows = _read(source, path, errors)
    if rows is None:
        return None
    rows = _checked(source, rows, required, errors)
    if rows is None:
        return None
    rows = _filtered(source, rows, errors)
    rows = None if rows is None else _common(source, rows, errors)
    return None if rows is None else _sampled(source, rows, seed, errors)


def _read(source: n.DataSource, path: Path, errors: ErrorCollector) -> list[Row] | None:
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        errors.add(source.path.span, f"data file not found: '{source.path.value}'",
                   f"paths are relative to the spec's folder ({display_path(Path(source.span.file).parent) or '.'})")
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
    return _records(source, text, errors)


def _records(source: n.DataSource, text: str, errors: ErrorCollector) -> list[Row] | None:
    """The rows of a CSV text; a ragged line, an unterminated quote or a repeated column is an error
    (naming the CSV's line, never quoting it: the file is not the spec)."""
    where = f"data file '{source.path.value}'"
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    try:
        header = next(reader, [])
        records = [(reader.line_num, record) for record in reader if record]
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
    rows = [dict(zip(header, record, strict=True)) for _, record in records]
    return [{new: row[old] for new, old in source.mapping.items()} | row for row in rows]


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
        ranked = sorted(members, key=lambda r: item_rng(draw_seed, source.name, r[source.key or ""]).random())
        chosen.update(r[source.key or ""] for r in ranked[: source.sample])
    return [row for row in rows if row[source.key or ""] in chosen]
