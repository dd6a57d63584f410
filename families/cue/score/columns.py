"""What the cue scorer keeps of a run as it streams the suite and results.jsonl: codes in arrays, a few bytes a row,
never a Python object a row (issue 34).

`CueSuite` codes each suite row's cell fields and answers mapping (runner/run_columns.Codes: each distinct value held
once), `CueAnswers` each answered reply's suite position and what was read of its reply. `CueAnswers.frame` then
gives the tidy frame of load.py (a row per answer, its texts as categoricals): the fields a row's cell decides are
worked out once per distinct value and taken at the answers' positions.
"""

from __future__ import annotations

from array import array
from collections.abc import Callable, Sequence
from typing import Any, overload

import numpy as np
import pandas as pd

from spec_audits.families.cue.check import CELL_FIELDS
from spec_audits.sdk import Codes, SuiteIds, SuiteRow

FORMATS = ("neutral", "direct", "puzzled")


class CueSuite:
    """What the scorer reads of a cue suite, `add`ed as the reader streams it: the rows' ids, cells and answers,
    the puzzle's bands, the hidden attributes (the cell keys of the first cued row besides the design's own, in
    name order) and the first row without a format (1-based)."""

    def __init__(self) -> None:
        self.ids = SuiteIds()
        self.answers = Codes()
        self.cells: dict[str, Codes] = {}
        self.bands: tuple[str, ...] = ()
        self.attributes: tuple[str, ...] = ()
        self.unformatted: int | None = None
        self._cued = False

    def add(self, offset: int, row: SuiteRow) -> None:
        count = len(self.answers.codes)
        self.ids.add(offset, row)
        self.answers.add(tuple(row.answers.items()))
        for key, value in row.cell.items():
            column = self.cells.get(key)
            if column is None:  # a key first seen late is missing before
                column = self.cells[key] = Codes()
                column.codes.extend(array("i", [-1]) * count)
            column.add(value)
        for column in self.cells.values():
            if len(column.codes) == count:
                column.codes.append(-1)
        if row.cell.get("format") not in FORMATS and self.unformatted is None:
            self.unformatted = count + 1
        if row.puzzle and not self.bands:
            self.bands = tuple(band["name"] for band in row.puzzle["difficulty"]["bands"])
        if not self._cued and row.cell.get("format") != "neutral":
            self.attributes, self._cued = tuple(sorted(set(row.cell) - set(CELL_FIELDS))), True

    def cell(self, position: int) -> dict[str, Any]:
        """The cell of the suite's row at `position`: the keys it has, a None value left out."""
        return {key: column.values[code] for key, column in self.cells.items() if (code := column.codes[position]) >= 0}

    def tokens(self, position: int) -> tuple[str, ...]:
        """The answer tokens of the suite's row at `position`."""
        return tuple(token for token, _ in self.answers.values[self.answers.codes[position]])

    def mappings(self) -> Sequence[dict[str, str]]:
        """Each suite row's answers mapping, by position (as runner/run_columns.ResultCodes.check reads them)."""
        return _Mappings(self.answers)


class _Mappings(Sequence[dict[str, str]]):
    """The suite rows' answers mappings, each made from its coded items when asked for."""

    def __init__(self, answers: Codes) -> None:
        self._answers = answers

    def __len__(self) -> int:
        return len(self._answers.codes)

    @overload
    def __getitem__(self, index: int) -> dict[str, str]: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[dict[str, str]]: ...
    def __getitem__(self, index: int | slice) -> dict[str, str] | Sequence[dict[str, str]]:
        if isinstance(index, slice):
            return [self[i] for i in range(len(self))[index]]
        return dict(self._answers.values[self._answers.codes[index]])


class CueAnswers:
    """Each answered reply as the results stream: its suite position, model, answer token (empty: an abstention), what
    it restates of each hidden attribute and whether it identifies them all."""

    def __init__(self, attributes: tuple[str, ...]) -> None:
        self.positions = array("i")
        self.model, self.answer = Codes(), Codes()
        self.said = {attribute: Codes() for attribute in attributes}
        self.identified = array("b")

    def __len__(self) -> int:
        return len(self.positions)

    def add(self, position: int, model: str, answer: str, said: dict[str, str], identified: bool) -> None:
        self.positions.append(position)
        self.model.add(model)
        self.answer.add(answer)
        for attribute, codes in self.said.items():
            codes.add(said[attribute])
        self.identified.append(identified)

    def frame(self, suite: CueSuite) -> pd.DataFrame:
        """The tidy frame, a row per answer (load.py's docstring), its texts as categoricals."""
        cell = _Cells(suite, np.frombuffer(self.positions, dtype=np.int32))
        neutral = cell.codes("format") == cell.code("format", "neutral")
        return pd.DataFrame({
            "model": self.model.categorical(self.model.array()),
            "dilemma": cell.text("dilemma", str),
            "combination": cell.text("combination", str, blank=neutral),
            "item": cell.item(blank=neutral),
            "individual": cell.text("person", _or("")),
            **{attribute: cell.text(attribute, lambda value: str(value or "")) for attribute in self.said},
            "format": cell.text("format", str),
            "difficulty": cell.text("difficulty", _or("")),
            "probe": cell.text("probe", _or("what_if")),
            "consequences": cell.codes("consequences") == cell.code("consequences", "with"),
            "answer": self.answer.categorical(self.answer.array()),
            "benefit": cell.text("benefit", str),
            "status": cell.text("person_status", _or("")),
            "topic": cell.text("topic_group", _or("")),
            **{f"said_{attribute}": codes.categorical(codes.array()) for attribute, codes in self.said.items()},
            "identified": np.frombuffer(self.identified, dtype=np.int8).astype(bool),
        })


def _or(default: str) -> Callable[[Any], str]:
    """A cell value, or `default` where the cell lacks it (or holds None or an empty text)."""
    return lambda value: value or default


class _Cells:
    """The suite's cell fields at the answers' positions, each worked out once per distinct value."""

    def __init__(self, suite: CueSuite, positions: np.ndarray) -> None:
        self._suite, self._positions = suite, positions

    def codes(self, key: str) -> np.ndarray:
        """The field's code at each answer (-1 where the row lacks it)."""
        column = self._suite.cells.get(key)
        return column.array()[self._positions] if column is not None else np.full(len(self._positions), -1, np.int32)

    def code(self, key: str, value: str) -> int:
        """The field's code of `value` (-2, no answer's, where no row holds it)."""
        column = self._suite.cells.get(key)
        return column.values.index(value) if column is not None and value in column.values else -2

    def text(self, key: str, read: Callable[[Any], str], blank: np.ndarray | None = None) -> pd.Categorical[Any]:
        """`read` of the field at each answer (`read(None)` where the row lacks it), '' where `blank`."""
        column = self._suite.cells.get(key)
        values = [read(value) for value in (column.values if column is not None else [])]
        return _categorical(self.codes(key), [*values, read(None)], blank)

    def item(self, blank: np.ndarray) -> pd.Categorical[Any]:
        """DILEMMA-COMBINATION at each answer, '' where `blank` (neutral rows)."""
        dilemma, combination = self.codes("dilemma"), self.codes("combination")
        pairs, found = np.unique(np.stack([dilemma, combination]), axis=1, return_inverse=True)
        texts = [column.values if (column := self._suite.cells.get(key)) else [] for key in ("dilemma", "combination")]
        values = [f"{texts[0][d]}-{texts[1][c]}" if d >= 0 and c >= 0 else "" for d, c in pairs.T.tolist()]
        return _categorical(found.reshape(-1), values, blank)


def _categorical(codes: np.ndarray, values: list[str], blank: np.ndarray | None) -> pd.Categorical[Any]:
    """The categorical of `values` at `codes` (-1: the last value), '' where `blank`."""
    values = [*values, ""]
    if blank is not None:
        codes = np.where(blank, len(values) - 1, codes)
    distinct: pd.Categorical[Any] = pd.Categorical(values)
    return pd.Categorical.from_codes(distinct.codes[np.where(codes < 0, len(values) - 2, codes)], dtype=distinct.dtype)
