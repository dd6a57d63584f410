"""The streamed run's plan (runner/suite_index.py, runner/plan.py's Plan): the same items as the in-memory plan,
which selects exactly what it selected before the run streamed its suite (golden digests, taken from the
plan that held every row), rows read again by offset, and the reader's checks kept in a stream."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from spec_audits.contract import reader, unique_ids
from spec_audits.contract.reader import ContractError, read_suite, scan_suite
from spec_audits.contract.suite_model import SuiteRow
from spec_audits.contract.writer import suite_row
from spec_audits.runner.plan import Plan, Shard, plan
from spec_audits.runner.suite_index import RowIndex
from tests.support import write_suite

CASES: dict[str, dict[str, Any]] = {
    "all": {},
    "limit": {"limit": 17, "seed": 3},
    "strata": {"limit": 7, "seed": 1, "strata": ["factor", "influence", "condition"]},
    "strata_over": {"limit": 40, "seed": 2, "strata": ["factor", "condition"]},
    "shard": {"shard": Shard(2, 3)},
    "only": {"only": {"factor": "g"}, "limit": 9},
    "logprob": {"limit": 11, "mode": "logprob"},
}
# (items, sha256 of the items' keys as JSON, first 16 hex digits) of the plan before the run streamed its suite
GOLDEN = {
    (False, "all"): (240, "fea53a0eec5fa88e"), (False, "limit"): (36, "18bcec7f418a9c81"),
    (False, "strata"): (15, "fc330592a3352412"), (False, "strata_over"): (80, "b857444550239ea2"),
    (False, "shard"): (69, "5be74eb9343290c6"), (False, "only"): (18, "c0473fa037f10b0f"),
    (False, "logprob"): (11, "2241cd6f66b63a22"), (True, "all"): (240, "cb76c77c41ba0c1a"),
    (True, "limit"): (134, "245eaeffcf680971"), (True, "strata"): (57, "1340c73f00ff0f1c"),
    (True, "strata_over"): (240, "cb76c77c41ba0c1a"), (True, "shard"): (92, "612654f66800cffb"),
    (True, "only"): (24, "7d618adc6dc39055"), (True, "logprob"): (44, "0505caa3c1995455"),
}


def _rows(n: int, units: bool) -> list[SuiteRow]:
    """`n` rows over 3 factors x 4 influences x 2 conditions, 1-3 samples each, in units of 4 if `units`."""
    rows = []
    for i in range(n):
        body: dict[str, Any] = {
            "messages": [{"role": "user", "content": f"Question {i}?"}], "samples": 1 + i % 3,
            "cell": {"factor": "fgh"[i % 3], "influence": ["none", "survey", "aside", "persona"][(i // 3) % 4],
                     "condition": ["toward_A", "toward_B"][(i // 12) % 2], "n": i % 5},
            "answers": {"A": "x", "B": "y"}, "decode": {"max_tokens": 2}}
        if units:
            body["unit"] = f"u{i // 4}"
        rows.append(suite_row(body))
    return sorted(rows, key=lambda r: r.id)


def _digest(keys: list[tuple[str, int]]) -> tuple[int, str]:
    return len(keys), hashlib.sha256(json.dumps(keys).encode()).hexdigest()[:16]


@pytest.mark.parametrize("units", [False, True])
@pytest.mark.parametrize("case", sorted(CASES))
def test_the_streamed_plan_takes_the_items_the_in_memory_plan_took(tmp_path: Path, units: bool, case: str) -> None:
    options = dict(CASES[case])
    mode = options.pop("mode", "sample")
    rows = _rows(120, units)
    assert _digest([work.key for work in plan(rows, mode=mode, **options)]) == GOLDEN[(units, case)]
    folder = write_suite(tmp_path / "suite", rows)
    shard = options.get("shard")
    index = RowIndex(options.get("strata"), options.get("only"), shard.owns if shard else None)
    scan_suite(folder, index.add)
    streamed = Plan.of(index, folder / "suite.jsonl", mode=mode, limit=options.get("limit"),
                       seed=options.get("seed", 0))
    items = list(streamed)
    assert len(streamed) == len(items) and _digest([work.key for work in items]) == GOLDEN[(units, case)]
    by_id = {row.id: row for row in rows}
    assert all(work.row == by_id[work.row.id] for work in items)  # each row read back whole from its offset


def test_row_of_reads_any_row_of_the_suite_by_id(tmp_path: Path) -> None:
    rows = _rows(30, False)
    folder = write_suite(tmp_path / "suite", rows)
    index = RowIndex(owns=Shard(1, 3).owns)
    scan_suite(folder, index.add)
    streamed = Plan.of(index, folder / "suite.jsonl", mode="sample", limit=None, seed=0)
    unplanned = next(row for row in rows if not Shard(1, 3).owns(row.id))
    assert streamed.row_of(unplanned.id) == unplanned and streamed.row_of(rows[0].id) == rows[0]
    assert streamed.row_of("0" * 16) is None


@pytest.mark.parametrize("counted", [unique_ids.COUNTED_IDS, 0], ids=["counted", "sorted in numpy"])
def test_a_repeated_id_is_named_at_its_second_line_and_a_hash_collision_is_no_repeat(
        counted: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(unique_ids, "COUNTED_IDS", counted)  # a small suite's ids are counted, a large one's sorted
    folder = write_suite(tmp_path / "suite", _rows(6, False))
    monkeypatch.setattr(unique_ids, "id_hash", lambda text: 7)  # every id's hash agrees: the file is read again
    assert len(read_suite(folder).rows) == 6
    lines = (folder / "suite.jsonl").read_bytes().splitlines(keepends=True)
    (folder / "suite.jsonl").write_bytes(b"".join([*lines[:4], lines[1], *lines[4:]]))
    with pytest.raises(ContractError) as err:
        reader.read_suite_rows(folder / "suite.jsonl")
    assert err.value.line == 5 and err.value.problem == f"duplicate id {json.loads(lines[1])['id']}"


def test_a_suite_changed_while_a_run_reads_it_stops_the_run_naming_the_file(tmp_path: Path) -> None:
    folder = write_suite(tmp_path / "suite", _rows(6, False))
    index = RowIndex()
    scan_suite(folder, index.add)
    streamed = Plan.of(index, folder / "suite.jsonl", mode="sample", limit=None, seed=0)
    data = (folder / "suite.jsonl").read_bytes()
    (folder / "suite.jsonl").write_bytes(b"x" * len(data))
    with pytest.raises(ContractError) as err:
        list(streamed)
    assert err.value.path == folder / "suite.jsonl" and "changed while it was read (at byte 0)" in str(err.value)
