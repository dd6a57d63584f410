"""What a scorer keeps of a run while it streams suite.jsonl and results.jsonl: integers in arrays, never a Python
object per row.

`SuiteIds` holds each suite row's id as its 64-bit hash (spec_audits.contract.reader.id_hash) and byte offset, and
finds result rows' suite positions by a binary search of the sorted hashes, never a dict of a million id texts
(ids whose hashes agree are told apart by reading those rows again). `ResultCodes` holds what
`check_result_columns` checks of each result row (its line, suite position, model, answer and outcome) as codes,
about 30 bytes a row, and runs that check at the end of the stream. `Codes` codes any column of few distinct
values, and gives them back as the categorical pandas would make of them.
"""

from __future__ import annotations

from array import array
from collections.abc import Hashable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from spec_audits.contract.reader import SUITE_FILE, id_hash, read_rows_at
from spec_audits.contract.results_model import ResultRow, RunInfo
from spec_audits.contract.suite_model import SuiteRow
from spec_audits.runner.result_checks import check_result_columns


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
        return np.frombuffer(self.codes, dtype=np.int32) if len(self.codes) else np.zeros(0, np.int32)

    def categorical(self, codes: np.ndarray) -> pd.Categorical[Any]:
        """The values of `codes` (of this column) as the categorical pandas makes of them (its categories sorted
        where they sort, in order of first appearance otherwise), holding only the values present."""
        used = np.unique(codes[codes >= 0])
        found = pd.Categorical([self.values[code] for code in used.tolist()])
        recode = np.full(len(self.values) + 1, -1, dtype=np.int64)  # the last entry: code -1, a missing value
        recode[used] = found.codes
        return pd.Categorical.from_codes(recode[codes], dtype=found.dtype)


class SuiteIds:
    """`add` each suite row as the reader streams it (a scan_suite visitor); `positions` of ids afterwards."""

    def __init__(self, folder: Path) -> None:
        self.path = folder / SUITE_FILE
        self.hashes = array("Q")
        self.offsets = array("q")
        self._sorted: tuple[np.ndarray, np.ndarray] | None = None
        self._twice: dict[str, int] = {}  # the ids whose hashes another id shares, by text

    def add(self, offset: int, row: SuiteRow) -> None:
        self.hashes.append(id_hash(row.id))
        self.offsets.append(offset)

    def __len__(self) -> int:
        return len(self.hashes)

    def positions(self, ids: Sequence[str]) -> np.ndarray:
        """Each id's row number in the suite, -1 for an id the suite lacks."""
        order, hashes = self._sort()
        wanted = np.fromiter((id_hash(item) for item in ids), dtype=np.uint64, count=len(ids))
        at = np.searchsorted(hashes, wanted).clip(max=len(hashes) - 1)
        found = np.where(hashes[at] == wanted, order[at], -1)
        if self._twice:
            shared = np.isin(wanted, np.fromiter(map(id_hash, self._twice), dtype=np.uint64))
            for index in np.flatnonzero(shared).tolist():
                found[index] = self._twice.get(ids[index], -1)
        return found

    def _sort(self) -> tuple[np.ndarray, np.ndarray]:
        if self._sorted is None:
            hashes = np.frombuffer(self.hashes, dtype=np.uint64)
            order = np.argsort(hashes, kind="stable")
            ordered = hashes[order]
            twice = np.flatnonzero(np.isin(hashes, ordered[1:][ordered[1:] == ordered[:-1]]))
            offsets = [self.offsets[index] for index in twice.tolist()]
            self._twice = {row.id: int(index) for index, row in zip(twice.tolist(), read_rows_at(self.path, offsets),
                                                                      strict=True)}
            self._sorted = order, ordered
        return self._sorted


class ResultCodes:
    """What `check_result_columns` checks of each result row, `add`ed as results.jsonl streams."""

    def __init__(self) -> None:
        self.lines = array("q")
        self.positions = array("q")
        self.models, self.answers, self.outcomes = Codes(), Codes(), Codes()

    def add(self, line: int, position: int, row: ResultRow) -> None:
        self.lines.append(line)
        self.positions.append(position)
        self.models.add(row.model)
        self.answers.add(row.answer)
        self.outcomes.add(row.outcome)

    def check(self, path: Path, info: RunInfo, answers: Sequence[dict[str, str]]) -> None:
        """Refuse a row of another model or whose outcome contradicts its answer (`answers`: each suite row's)."""
        frame = pd.DataFrame({
            "row": np.frombuffer(self.lines, dtype=np.int64) if len(self.lines) else np.zeros(0, np.int64),
            "item_id": pd.Categorical.from_codes(np.frombuffer(self.positions, dtype=np.int64) if len(self.positions)
                                                 else np.zeros(0, np.int64), categories=pd.RangeIndex(len(answers))),
            **{name: pd.Categorical.from_codes(codes.array(), categories=pd.Index(codes.values, dtype=object))
               for name, codes in (("model", self.models), ("answer", self.answers), ("outcome", self.outcomes))}})
        check_result_columns(path, info, lambda names: [answers[position] for position in names], frame)
