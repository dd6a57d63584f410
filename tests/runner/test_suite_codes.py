"""SuiteCodes gathers a suite in coded columns that give the very frame SuiteColumns gives; IdLookup finds ids by
their 128-bit hashes, an id the suite lacks nowhere, even one whose first half a suite id shares."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import pytest

from spec_audits.contract.suite_model import SuiteRow
from spec_audits.runner import suite_columns
from spec_audits.runner.suite_columns import IdLookup, SuiteCodes, SuiteColumns, id_keys


def _row(name: str, cell: dict[str, Any], answers: dict[str, str] | None = None) -> SuiteRow:
    return SuiteRow.model_validate({"id": name, "messages": [{"role": "user", "content": "?"}], "samples": 2,
                                    "cell": cell, "answers": answers or {"A": "x", "B": "y"}, "decode": {}})


ROWS = [
    _row("r1", {"factor": "f2", "n_A": 3, "first": "A", "flag": "t"}),
    _row("r2", {"factor": "f1", "n_A": 4, "first": None, "edge": 2}, {"A": "y", "B": "x"}),
    _row("r3", {"factor": "f2", "n_A": 3, "first": "B", "flag": 0, "late": "z"}),
]


def test_coded_columns_are_the_frame_suite_columns_gives() -> None:
    plain, coded = SuiteColumns(), SuiteCodes()
    for offset, row in enumerate(ROWS):
        plain.add(offset, row)
        coded.add(offset, row)
    expected = plain.frame().drop(columns=["item_id", "answers"])
    pd.testing.assert_frame_equal(pd.DataFrame(coded.columns()), expected, check_exact=True)
    assert isinstance(expected["factor"].dtype, pd.CategoricalDtype)  # a text every row holds
    assert [coded.mappings[c] for c in coded.answer_codes] == [row.answers for row in ROWS]
    assert len(coded.mappings) == 2  # equal mappings held once
    first, second = coded.keys()
    assert all(np.array_equal(a, b) for a, b in zip((first, second), id_keys(["r1", "r2", "r3"]), strict=True))


def test_ids_are_found_by_both_halves_of_their_hash() -> None:
    first, second = id_keys(["b2", "c3", "a1"])
    found = IdLookup(first, second).positions(["a1", "zz", "b2", "a1"])
    assert found.tolist() == [2, -1, 0, 2]


def test_a_shared_first_half_is_told_apart_by_the_second(monkeypatch: pytest.MonkeyPatch) -> None:
    """Two suite ids whose first halves agree (a 64-bit collision, made here by hand) are both found; an id with
    that first half but another second half is not the suite's."""
    lookup = IdLookup(np.array([7, 5, 7, 9], dtype=np.uint64), np.array([1, 2, 3, 4], dtype=np.uint64))
    wanted = {"x": (7, 3), "y": (7, 1), "z": (7, 8), "w": (9, 4)}

    def keys(ids: list[str]) -> tuple[np.ndarray, np.ndarray]:
        return tuple(np.array([wanted[i][half] for i in ids], dtype=np.uint64) for half in (0, 1))  # type: ignore[return-value]

    monkeypatch.setattr(suite_columns, "id_keys", keys)
    assert lookup.positions(["x", "y", "z", "w"]).tolist() == [2, 0, -1, 3]
