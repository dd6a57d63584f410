"""A conditional-bias suite as columns, `add`ed as the reader streams it: of each row its id's 128-bit hash and
codes of its condition, arm, biases, display order, unit, owner and answers mapping, tens of bytes and no Python
object a row; of each bank row's record row also its bank row, metric and covariates.

A row's owner is its bank row, or a shared row's unit (`SuiteIds` holds the hashes). A row's messages, extraction
prompt and decode settings are never kept."""

from __future__ import annotations

import math
from array import array
from typing import Any

import numpy as np

from spec_audits.families.cognitive_bias.rows import row_checker
from spec_audits.sdk import Codes, SuiteIds, SuiteRow

CELLS = ("condition", "arm", "target_bias", "human_bias", "diagonal", "reversed")
RECORD_CONDITION = "biased_turn"  # a bank row's record is read off its biased-turn row of the control arm


class BiasSuite:
    """The suite's columns, and the first row (index, problem) that contradicts the analysis record."""

    def __init__(self, analysis: dict[str, Any]) -> None:
        self._problem_of = row_checker(analysis)
        self.control = str(analysis["arms"][0])
        self.ids = SuiteIds()
        self.cells = {key: Codes() for key in CELLS}
        self.units, self.owners, self.forms = Codes(), Codes(), Codes()  # forms: each row's answers mapping
        self.records = Records()
        self.problem: tuple[int, str] | None = None

    def add(self, offset: int, row: SuiteRow) -> None:
        if self.problem is None and (problem := self._problem_of(row)) is not None:
            self.problem = len(self.ids), problem
        self.ids.add(offset, row)
        if self.problem is not None:
            return  # the run is refused for that row: the columns are not read
        for key, codes in self.cells.items():
            codes.add(row.cell.get(key))
        meta = row.meta or {}
        self.units.add(row.unit)
        self.owners.add(str(meta.get("bank_row") or row.unit))
        self.forms.add(row.answers)
        if row.cell["condition"] == RECORD_CONDITION and row.cell["arm"] == self.control:
            bank_owner = self.owners.code(str(meta["bank_row"]))
            bank_row = self.owners.values[bank_owner] if type(meta["bank_row"]) is str else meta["bank_row"]
            self.records.add(len(self.ids) - 1, meta, self.owners.code(str(row.unit)), bank_owner, bank_row)

    def column(self, key: str) -> np.ndarray:
        """A cell field's codes, a row per suite row."""
        return self.cells[key].array()

    def text_codes(self, key: str) -> tuple[np.ndarray, list[str]]:
        """A cell field's values as text (str of each), coded: codes a row and the distinct texts."""
        names = sorted({str(value) for value in self.cells[key].values})
        recode = np.array([names.index(str(value)) for value in self.cells[key].values] + [-1], dtype=np.int64)
        return recode[self.column(key)], names


class Records:
    """Per bank row's record row: its suite position, the owner codes of its unit and bank row (where its shared
    and its own answers are found), its bank row, metric and covariates."""

    def __init__(self) -> None:
        self.positions = array("q")
        self.unit_owners, self.bank_owners = array("q"), array("q")
        self.bank_rows: list[Any] = []  # a text bank row is the very string `owners` holds
        self.metrics = Codes()
        self.covariates = Covariates()

    def add(self, position: int, meta: dict[str, Any], unit_owner: int, bank_owner: int, bank_row: Any) -> None:
        self.positions.append(position)
        self.unit_owners.append(unit_owner)
        self.bank_owners.append(bank_owner)
        self.bank_rows.append(bank_row)
        self.metrics.add(meta["metric"])
        self.covariates.add(meta.get("covariates") or {})


class Covariates:
    """Each record row's covariates by name: an array of floats while every value is a float, a list otherwise
    (what pandas would make of the records either way); a name a row lacks is NaN there."""

    def __init__(self) -> None:
        self.columns: dict[str, array[float] | list[Any]] = {}
        self.count = 0

    def add(self, found: dict[str, Any]) -> None:
        for key, value in found.items():
            column = self.columns.get(key)
            if column is None:
                column = self.columns[key] = array("d", [math.nan]) * self.count
            if isinstance(column, array) and type(value) is not float:
                column = self.columns[key] = list(column)
            column.append(value)
        self.count += 1
        for column in self.columns.values():
            if len(column) < self.count:
                column.append(math.nan)
