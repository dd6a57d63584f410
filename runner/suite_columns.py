"""What a scorer reads of a suite, gathered as the reader streams it: each row's id, samples, answers and cell
fields as columns, never its messages (most of a row's bytes), each distinct answers mapping and cell value
held once. `spec score` then holds about a hundred bytes a row of the suite instead of the whole rows."""

from __future__ import annotations

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
