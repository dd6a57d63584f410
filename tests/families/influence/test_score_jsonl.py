"""The fast results.jsonl column reader (msgspec) gives exactly what per-line json.loads gives; what it
refuses goes to json.loads, which names a bad line."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from spec_audits.contract.reader import DAMAGED_RESULTS, ContractError
from spec_audits.families.influence.score import jsonl
from spec_audits.families.influence.score.jsonl import _exact, _fast, result_pieces

ROWS = [
    {"item_id": "a1", "sample": 0, "model": "m", "params": {}, "outcome": "old", "error": None},
    {"item_id": "a1", "sample": 1, "model": "m", "params": {}, "outcome": None, "error": 'timeout "x"'},
    {"sample": 2, "item_id": "a1", "outcome": "caf\u00e9", "response": 'he said "outcome": no', "error": None},
    {"item_id": "b2", "sample": 0, "outcome": "young", "error": None, "usage": {"prompt_tokens": 3}},
]


def _write(tmp_path: Path, rows: list[dict], blank: bool = True) -> Path:
    path = tmp_path / "results.jsonl"
    lines = [json.dumps(r) for r in rows]
    path.write_text("\n".join(lines[:2] + ([""] if blank else []) + lines[2:]) + "\n")
    return path


def read_result_columns(path: Path, logprobs: bool = False) -> pd.DataFrame:
    """The file's pieces as one frame."""
    return pd.concat(list(result_pieces(path, logprobs)), ignore_index=True)


def _values(frame: pd.DataFrame) -> list[list[object]]:
    return frame.astype(object).where(frame.notna(), None).values.tolist()


@pytest.mark.parametrize("chunk", [7, 1 << 20])  # 7 bytes: every line spans pieces, most pieces end mid-line
@pytest.mark.parametrize("logprobs", [False, True])
def test_fast_path_equals_exact_parse(tmp_path: Path, logprobs: bool, chunk: int,
                                      monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("msgspec")
    monkeypatch.setattr(jsonl, "CHUNK", chunk)
    rows = [*ROWS, {"item_id": "b2", "sample": 1, "outcome": "old", "logprobs": {"A": 0.25, "B": 1}}]
    path = _write(tmp_path, rows, blank=False)
    assert _fast(path.read_bytes(), logprobs, 1) is not None
    fast = read_result_columns(path, logprobs)
    assert _values(fast) == _values(_exact(path, path.read_bytes(), logprobs))
    assert fast["outcome"].tolist()[2] == "café" and fast["error"].tolist()[1] == 'timeout "x"'


@pytest.mark.parametrize("odd", [{"sample": 2.0}, {"outcome": 3}, {"error": {"code": 5}}, {"logprobs": [0.5]}])
def test_values_of_another_type_are_read_the_exact_way(tmp_path: Path, odd: dict) -> None:
    path = _write(tmp_path, [*ROWS[:3], ROWS[3] | odd], blank=False)
    assert _fast(path.read_bytes(), "logprobs" in odd, 1) is None
    frame = read_result_columns(path, "logprobs" in odd)
    assert _values(frame)[3][1:5] == ["b2", int((ROWS[3] | odd)["sample"]), (ROWS[3] | odd)["outcome"],
                                      (ROWS[3] | odd)["error"]]


@pytest.mark.parametrize("chunk", [7, 1 << 20])  # 7 bytes: a piece a line, the blank one read the exact way
def test_blank_lines_fall_back_and_keep_line_numbers(tmp_path: Path, chunk: int,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(jsonl, "CHUNK", chunk)
    path = _write(tmp_path, ROWS)
    assert _fast(path.read_bytes(), False, 1) is None
    assert read_result_columns(path)["row"].tolist() == [1, 2, 4, 5]


def test_a_line_separator_inside_a_string_is_not_a_line_end(tmp_path: Path) -> None:
    path = _write(tmp_path, [ROWS[0] | {"response": "one\u2028two\x85three"}, ROWS[1]], blank=False)
    path.write_bytes(path.read_bytes().replace(b"\\u2028", "\u2028".encode()))  # raw, as pydantic writes it
    assert read_result_columns(path)["row"].tolist() == [1, 2]
    assert _exact(path, path.read_bytes(), False)["row"].tolist() == [1, 2]


def test_a_nested_key_is_not_the_row_s_own(tmp_path: Path) -> None:
    rows = [*ROWS, {"item_id": "c3", "sample": 0, "outcome": "old", "turns": [{"outcome": "young"}]}]
    path = _write(tmp_path, rows, blank=False)
    assert read_result_columns(path)["outcome"].iloc[-1] == "old"


@pytest.mark.parametrize("chunk", [7, 1 << 20])
def test_a_line_that_is_not_a_result_row_is_a_contract_error_naming_its_line(tmp_path: Path, chunk: int,
                                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(jsonl, "CHUNK", chunk)
    path = _write(tmp_path, ROWS)
    path.write_text(path.read_text() + "{not json}\n" + json.dumps(ROWS[0]) + "\n")
    with pytest.raises(ContractError) as info:
        read_result_columns(path)
    assert (info.value.path, info.value.line) == (path, 6)
    assert info.value.message == (
        f"{path}:6: not a result row (JSONDecodeError('Expecting property name enclosed in double quotes: "
        f"line 1 column 2 (char 1)')); {DAMAGED_RESULTS}"
    )


@pytest.mark.parametrize("blank", [False, True])
def test_a_torn_last_line_is_left_out_on_both_paths(tmp_path: Path, blank: bool) -> None:
    path = _write(tmp_path, ROWS, blank=blank)
    path.write_bytes(path.read_bytes() + json.dumps(ROWS[0]).encode()[:-3])
    assert read_result_columns(path)["row"].tolist() == ([1, 2, 4, 5] if blank else [1, 2, 3, 4])


def test_a_nested_key_on_one_line_and_a_missing_one_on_another(tmp_path: Path) -> None:
    rows = [
        {"item_id": "a1", "sample": 0, "params": {"outcome": "nested"}, "outcome": "old", "error": None},
        {"item_id": "a2", "sample": 0, "error": None},
    ]
    path = _write(tmp_path, rows, blank=False)
    frame = read_result_columns(path)
    assert frame["outcome"].tolist()[0] == "old" and frame["outcome"].isna().tolist()[1]


def test_a_torn_last_line_is_left_out_of_the_pieces(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(jsonl, "CHUNK", 5)
    path = _write(tmp_path, ROWS[:2], blank=False)
    path.write_bytes(path.read_bytes() + b'{"item_id": "a9", "sam')
    assert read_result_columns(path)[["item_id", "sample"]].values.tolist() == [["a1", 0], ["a1", 1]]
