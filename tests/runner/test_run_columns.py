"""What a scorer keeps of a run as it streams (runner/run_columns.py): result ids found by their hashes (a batch
of suite ids hashed at a time) and coded columns that give back the categoricals pandas makes."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from spec_audits.contract.reader import scan_suite
from spec_audits.contract.writer import suite_row, write_suite_folder
from spec_audits.runner import run_columns
from spec_audits.runner.run_columns import Codes, SuiteIds


def _suite(folder: Path, count: int) -> list[str]:
    rows = [suite_row({"messages": [{"role": "user", "content": f"q{i}"}], "answers": {"A": "a", "B": "b"},
                       "cell": {"i": i}, "samples": 1, "decode": {}}) for i in range(count)]
    write_suite_folder(folder, rows, suite="ids", spec_file="s.spec", spec_sha256="0" * 64, compiler_version="test",
                       schema_version="1", seed=0)
    return [row.id for row in sorted(rows, key=lambda r: r.id)]


@pytest.mark.parametrize("batch", [65_536, 7], ids=["one_batch", "batches_of_7"])
def test_ids_are_found_at_their_row_and_an_unknown_id_nowhere(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                              batch: int) -> None:
    monkeypatch.setattr(run_columns, "BATCH", batch)
    ids = _suite(tmp_path, 50)
    found = SuiteIds()
    scan_suite(tmp_path, found.add)
    asked = [ids[7], "not-an-id", ids[0], ids[49], ids[7]]
    assert found.positions(asked).tolist() == [7, -1, 0, 49, 7]


@pytest.mark.parametrize("values", [["b", "a", None, "c", "a"], [3, 1, 2, 1], ["x", 1, "y", 1]],
                         ids=["texts", "numbers", "unsortable"])
def test_coded_values_give_back_the_categorical_pandas_makes(values: list[object]) -> None:
    codes = Codes()
    for value in values:
        codes.add(value)
    made = codes.categorical(codes.array())
    expected = pd.Categorical(values)
    assert list(made.categories) == list(expected.categories)
    assert made.codes.tolist() == expected.codes.tolist()
    kept = codes.categorical(codes.array()[np.array([0, 1])])  # only the values present become categories
    assert list(kept.categories) == list(pd.Categorical(values[:2]).categories)
