"""What a scorer keeps of a run while it streams suite.jsonl and results.jsonl: integers in arrays, never a Python
object per row.

`SuiteIds` holds each suite row's id as its 128-bit hash and finds result rows' suite positions by a binary
search of the sorted hashes (runner/suite_columns.IdLookup), never a dict of a million id texts. `ResultCodes`
holds what `check_result_columns` and `refuse_repeats` check of each result row (its line, suite position, sample,
model, answer and outcome) as codes, about 28 bytes a row, and runs those checks at the end of the stream. `Codes`
codes any column of few distinct values, and gives them back as the categorical pandas would make of them.
`unmap_freed_arrays` has glibc give a scorer's freed arrays back at once.
"""

from __future__ import annotations

import contextlib
import ctypes
import sys
from array import array
from collections.abc import Hashable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from spec_audits.contract.results_model import ResultRow, RunInfo
from spec_audits.contract.suite_model import SuiteRow
from spec_audits.runner.result_checks import CodedMeanings, check_result_columns
from spec_audits.runner.score_input import ScoreInputError, refuse_repeats, repeated, sample_keys
from spec_audits.runner.suite_columns import IdLookup, id_keys

BATCH = 65_536  # suite ids hashed at a time


def int32s(values: array[int]) -> np.ndarray:
    """An array("i") as numpy's int32, without a copy."""
    return np.frombuffer(values, dtype=np.int32) if len(values) else np.zeros(0, np.int32)


class Codes:
    """A column of values coded as they come (`add`), each distinct value held once; None is code -1."""

    def __init__(self) -> None:
        self.codes = array("i")
        self.values: list[Any] = []
        self._code: dict[Hashable, int] = {}

    def add(self, value: Any) -> int:
        self.codes.append(code := self.code(value))
        return code

    def code(self, value: Any) -> int:
        """The value's code (a new one for a value first seen), without adding a row."""
        if value is None:
            return -1
        key = (type(value), value if isinstance(value, Hashable) else repr(value))
        found = self._code.get(key)
        if found is None:
            found = self._code[key] = len(self.values)
            self.values.append(value)
        return found

    def array(self) -> np.ndarray:
        return int32s(self.codes)

    def categorical(self, codes: np.ndarray) -> pd.Categorical[Any]:
        """The values of `codes` (of this column) as the categorical pandas makes of them (its categories sorted
        where they sort, in order of first appearance otherwise), holding only the values present."""
        used = np.unique(codes[codes >= 0])
        found = pd.Categorical([self.values[code] for code in used.tolist()])
        recode = np.full(len(self.values) + 1, -1, dtype=np.int64)  # the last entry: code -1, a missing value
        recode[used] = found.codes
        return pd.Categorical.from_codes(recode[codes], dtype=found.dtype)


class SuiteIds:
    """`add` each suite row as the reader streams it (a scan_suite visitor); `positions` of ids afterwards, found by
    their 128-bit hashes (runner/suite_columns.IdLookup), the ids hashed a batch at a time and never held; and each
    row's samples (`ResultCodes.check` refuses a result's sample its row does not draw)."""

    def __init__(self) -> None:
        self._pending: list[str] = []
        self._halves: list[tuple[np.ndarray, np.ndarray]] = []
        self._lookup: IdLookup | None = None
        self.samples = array("q")  # each row's samples: a result's sample index must be below it

    def add(self, offset: int, row: SuiteRow) -> None:
        self._pending.append(row.id)
        self.samples.append(row.samples)
        if len(self._pending) == BATCH:
            self._hash()

    def _hash(self) -> None:
        self._halves.append(id_keys(self._pending))
        self._pending = []

    def __len__(self) -> int:
        return sum(len(first) for first, _ in self._halves) + len(self._pending)

    def positions(self, ids: Sequence[str]) -> np.ndarray:
        """Each id's row number in the suite, -1 for an id the suite lacks."""
        if self._lookup is None:
            self._hash()
            self._lookup = IdLookup(*(np.concatenate(halves) for halves in zip(*self._halves, strict=True)))
            self._halves = []
        return self._lookup.positions(list(ids))


class ResultCodes:
    """What `check_result_columns` and `refuse_repeats` check of each result row, `add`ed as results.jsonl streams."""

    def __init__(self) -> None:
        self.lines = array("i")  # results.jsonl's line and the suite row (fewer than 2**31 of either)
        self.positions = array("i")
        self.samples = array("q")  # a stranger's sample may be any int64
        self.models, self.answers, self.outcomes = Codes(), Codes(), Codes()

    def add(self, line: int, position: int, row: ResultRow) -> None:
        self.lines.append(line)
        self.positions.append(position)
        self.samples.append(row.sample)
        self.models.add(row.model)
        self.answers.add(row.answer)
        self.outcomes.add(row.outcome)

    def check(self, path: Path, info: RunInfo, answers: Sequence[dict[str, str]] | CodedMeanings,
              drawn: array[int]) -> None:
        """Refuse a row of another model or whose outcome contradicts its answer (`answers`: each suite row's answers
        mapping, or for a million rows a code a suite row into the distinct mappings: no list of a mapping a row),
        then one whose sample its suite row does not draw (`drawn`: each suite row's samples, `SuiteIds.samples`),
        then one that repeats an earlier row's (item, sample)."""
        rows = len(answers.codes) if isinstance(answers, CodedMeanings) else len(answers)
        frame = pd.DataFrame({
            "row": int32s(self.lines),
            "item_id": pd.Categorical.from_codes(int32s(self.positions), categories=pd.RangeIndex(rows)),
            **{name: pd.Categorical.from_codes(codes.array(), categories=pd.Index(codes.values, dtype=object))
               for name, codes in (("model", self.models), ("answer", self.answers), ("outcome", self.outcomes))}})
        check_result_columns(path, info, lambda names: _of_rows(answers, names), frame)
        positions, samples, lines = int32s(self.positions), self._sample_array(), int32s(self.lines)
        outside = samples >= np.frombuffer(drawn, dtype=np.int64)[positions]
        if outside.any():
            raise ScoreInputError(path, "sample index outside the item's samples",
                                  row=int(lines[int(np.flatnonzero(outside)[0])]), column="sample")
        refuse_repeats(path, repeated(sample_keys(positions, samples)), lines)

    def _sample_array(self) -> np.ndarray:
        """Each row's sample, as numpy's int64 (no copy)."""
        return np.frombuffer(self.samples, dtype=np.int64) if len(self.samples) else np.zeros(0, np.int64)


def _of_rows(answers: Sequence[dict[str, str]] | CodedMeanings,
             names: pd.Index) -> Sequence[dict[str, str] | None] | CodedMeanings:
    """The answers mappings of the suite rows `names` (every suite position, in order, as check's frame names them)."""
    return answers if isinstance(answers, CodedMeanings) else [answers[position] for position in names]


def unmap_freed_arrays() -> None:
    """Have glibc's malloc map every block over 128 KiB on its own and unmap it when freed. By default it raises that
    threshold to the largest block freed so far (up to 32 MiB), so that a scorer's arrays, freed one after another,
    stay in the heap: about 50 MB more resident at a million-trial influence score's peak, 25 MB at a 126k-row
    conditional-bias one. Elsewhere (no glibc) nothing changes.

    pandas 3 keeps text columns in pyarrow (which it imports), whose default pool, mimalloc, kept what an influence
    score's per-item flip majorities once held: about 60 MB more resident from then on at a million trials, 25 MB
    under the plots of 100k. Its system pool is that same malloc."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL("libc.so.6").mallopt(_M_MMAP_THRESHOLD, 128 << 10)
    arrow = sys.modules.get("pyarrow")  # never imported here: only where pandas uses it
    if arrow is not None:
        arrow.set_memory_pool(arrow.system_memory_pool())


_M_MMAP_THRESHOLD = -3  # mallopt's parameter number, from glibc's malloc.h
