"""What a scorer reads of a suite, gathered as the reader streams it: each row's id, samples, answers and cell
fields as columns, never its messages (most of a row's bytes), each distinct answers mapping and cell value
held once. `spec score` then holds about a hundred bytes a row of the suite instead of the whole rows.

SuiteCodes holds the same in a few bytes a row with no Python object a row (each id as a 128-bit hash, each mapping
and cell value as a small integer code), and IdLookup finds results' ids among the suite's by those hashes."""

from __future__ import annotations

import hashlib
from array import array
from collections.abc import Hashable
from typing import Any

import numpy as np
import pandas as pd

from spec_audits.contract.suite_model import SuiteRow


class SuiteColumns:
    """`add` one row at a time (spec_audits.contract.reader.scan_suite's visitor); `frame` the columns."""

    def __init__(self) -> None:
        self.ids: list[str] = []
        self.samples = array("q")
        self.answers: list[dict[str, str]] = []
        self.cells: dict[str, list[Any]] = {}
        self._once: dict[Hashable, Any] = {}

    def add(self, offset: int, row: SuiteRow) -> None:
        count = len(self.ids)
        self.ids.append(row.id)
        self.samples.append(row.samples)
        self.answers.append(self._shared(("answers", *row.answers.items()), row.answers))
        for key, value in row.cell.items():
            column = self.cells.get(key)
            if column is None:  # a key first seen late is missing before
                column = self.cells[key] = [np.nan] * count
            column.append(self._shared((type(value), value), value) if isinstance(value, Hashable) else value)
        for column in self.cells.values():
            if len(column) == count:
                column.append(np.nan)

    def _shared(self, key: Hashable, value: Any) -> Any:
        """`value`, or the equal one (of the same type) already held."""
        return self._once.setdefault(key, value)

    def frame(self) -> pd.DataFrame:
        """item_id, samples, answers and every cell field, a row per suite row (NaN where a cell lacks a field),
        the values pandas.DataFrame would make from the rows' records; a text field every row has is a categorical."""
        # the ids as the Python strings already held: a str (arrow) column would copy every id, and the id index's
        # look-ups would make a Python string of each again
        return pd.DataFrame({"item_id": pd.Series(self.ids, dtype=object),
                             "samples": np.frombuffer(self.samples, dtype=np.int64), "answers": self.answers,
                             **{key: _compact(values) for key, values in self.cells.items()}})


def _compact(values: list[Any]) -> Any:
    """A cell column of few distinct texts as a categorical (a byte or two a row, not a copy of each text)."""
    return pd.Categorical(values) if all(isinstance(value, str) for value in values) else values


class SuiteCodes:
    """What SuiteColumns gathers in a few bytes a row and no Python object a row: each id as a 128-bit hash (two
    uint64 halves, `id_keys`), each answers mapping and cell value as a small integer code into the distinct ones.
    `add` one row at a time (spec_audits.contract.reader.scan_suite's visitor); then `keys` and `columns`."""

    def __init__(self) -> None:
        self._digests = bytearray()
        self.samples = array("q")
        self.answer_codes = array("i")
        self.mappings: list[dict[str, str]] = []
        self._mapping_code: dict[tuple[tuple[str, str], ...], int] = {}
        self._cells: dict[str, _Coded] = {}

    def __len__(self) -> int:
        return len(self.samples)

    def add(self, offset: int, row: SuiteRow) -> None:
        count = len(self.samples)
        self._digests += _digest(row.id)
        self.samples.append(row.samples)
        code = self._mapping_code.setdefault(tuple(row.answers.items()), len(self.mappings))
        if code == len(self.mappings):
            self.mappings.append(row.answers)
        self.answer_codes.append(code)
        for key, value in row.cell.items():
            column = self._cells.get(key)
            if column is None:  # a key first seen late is missing before
                column = self._cells[key] = _Coded(count)
            column.add(value)
        for column in self._cells.values():
            if len(column.codes) == count:
                column.codes.append(-1)

    def keys(self) -> tuple[np.ndarray, np.ndarray]:
        """The ids' hashes: the first halves (an id's 64-bit name) and the second (its check), as `id_keys`. Once:
        the digests are let go."""
        found = _halves(self._digests)
        self._digests = bytearray()
        return found

    def columns(self) -> dict[str, Any]:
        """samples and every cell field, a row per suite row: the values SuiteColumns.frame gives them. Once: the
        codes are let go."""
        cells, self._cells = self._cells, {}
        return {"samples": np.frombuffer(self.samples, dtype=np.int64),
                **{key: cells.pop(key).column() for key in list(cells)}}


class _Coded:
    """One cell field: a code a row (-1: the row lacks the field) into its distinct values."""

    def __init__(self, missing: int) -> None:
        self.codes = array("i", [-1]) * missing
        self.values: list[Any] = []
        self._code: dict[Hashable, int] = {}

    def add(self, value: Any) -> None:
        code = self._code.setdefault((type(value), value), len(self.values))  # a cell value is str, int or None
        if code == len(self.values):
            self.values.append(value)
        self.codes.append(code)

    def column(self) -> Any:
        """The column pandas.DataFrame makes of the rows' values (a categorical where every row holds a text):
        the distinct values' column (with NaN for a missing field) taken at the codes."""
        codes = np.frombuffer(self.codes, dtype=np.int32)
        missing = bool((codes < 0).any())
        if not missing and all(isinstance(value, str) for value in self.values):
            distinct = pd.Categorical(self.values)
            return pd.Categorical.from_codes(distinct.codes[codes], dtype=distinct.dtype)
        values = pd.Series([*self.values, *([np.nan] if missing else [])])
        return values.take(np.where(codes < 0, len(self.values), codes)).reset_index(drop=True)


def _digest(text: str) -> bytes:
    return hashlib.blake2b(text.encode(), digest_size=16).digest()


def _halves(digests: bytes | bytearray) -> tuple[np.ndarray, np.ndarray]:
    pairs = np.frombuffer(digests, dtype=">u8").reshape(-1, 2)
    return pairs[:, 0].astype(np.uint64), pairs[:, 1].astype(np.uint64)


def id_keys(ids: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """Each id's 128-bit blake2b hash as two uint64 halves: the first names the id in a frame (a uint64 column, not a
    Python string a row), the second checks that an id found by its first half is the one sought."""
    return _halves(b"".join(_digest(text) for text in ids))


class IdLookup:
    """Ids found among a suite's (`SuiteCodes.keys`) by sorted-hash search, a piece at a time: an id is the suite's
    when both halves of its hash agree (two distinct ids share both with a chance of about 2^-128 a pair)."""

    def __init__(self, first: np.ndarray, second: np.ndarray) -> None:
        order = np.argsort(first, kind="stable")
        self._sorted = first[order]
        self._order = order.astype(np.int32) if len(order) < 2**31 else order  # 4 bytes a suite row, not 8
        self._second = second

    def __len__(self) -> int:
        return len(self._order)

    def positions(self, ids: list[str]) -> np.ndarray:
        """Each id's position in the suite, -1 where the suite lacks it."""
        first, second = id_keys(ids)
        at = np.searchsorted(self._sorted, first).clip(max=len(self._sorted) - 1)  # a suite has rows
        position = self._order[at].astype(np.int64)
        named = self._sorted[at] == first
        found = np.where(named & (self._second[position] == second), position, -1)
        for index in np.flatnonzero(named & (found < 0)).tolist():
            found[index] = self._among_equal(int(at[index]), first[index], second[index])
        return found

    def _among_equal(self, at: int, first: np.uint64, second: np.uint64) -> int:
        """The suite position of the id of these halves, among the suite's ids that share its first half; -1."""
        while at < len(self._sorted) and self._sorted[at] == first:
            if self._second[self._order[at]] == second:
                return int(self._order[at])
            at += 1
        return -1
