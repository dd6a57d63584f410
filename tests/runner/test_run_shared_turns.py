"""Shared generated turns (Message.share) are made once per run even without the cache, --limit takes
whole units, and --dry-run counts a shared turn once."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from spec_audits.contract.reader import read_results, read_suite
from spec_audits.contract.suite_model import SuiteRow
from spec_audits.contract.writer import suite_row
from spec_audits.runner.execute import run_suite
from spec_audits.runner.plan import Shard, estimate, plan
from spec_audits.runner.run_config import RunConfig
from tests.stub_server import StubServer
from tests.support import write_suite


def _rows(units: int) -> list[SuiteRow]:
    """Per unit two arms that see one shared acknowledgment, and one row with an unshared one."""
    rows = []
    for unit in range(units):
        for arm, share in (("control", f"u{unit}|ack"), ("treatment", f"u{unit}|ack"), ("solo", None)):
            body: dict[str, Any] = {
                "messages": [{"role": "user", "content": f"Situation {unit}."},
                             {"role": "assistant", "generate": True, "share": share, "decode": {"max_tokens": 8}},
                             {"role": "user", "content": f"Decide ({arm}): A or B?"}],
                "samples": 1, "cell": {"unit": f"u{unit}", "arm": arm}, "answers": {"A": "a", "B": "b"},
                "decode": {"temperature": 0.0, "max_tokens": 2}, "unit": f"u{unit}",
            }
            rows.append(suite_row(body))
    return sorted(rows, key=lambda r: r.id)


def test_both_arms_get_one_generated_turn_without_the_cache(tmp_path: Path) -> None:
    suite = write_suite(tmp_path / "suite", _rows(4))
    server = StubServer()
    api_base = server.start()
    try:
        summary = run_suite(RunConfig(suite_dir=suite, out=tmp_path / "run", model="openai/stub", api_base=api_base,
                                      use_cache=False, concurrency=4, progress=False))
        requests = server.stats.requests
    finally:
        server.stop()
    assert (summary.done, summary.calls, requests) == (12, 4 + 4 + 12, 20)  # shared + solo turns + answers
    results = read_results(tmp_path / "run" / "results.jsonl")
    rows = {r.id: r for r in read_suite(suite).rows}
    acks: dict[str, set[str]] = {}
    for result in results:
        share = rows[result.item_id].messages[1].share
        if share is not None:
            acks.setdefault(share, set()).add(result.turns[0]["content"])  # type: ignore[index]
    assert len(acks) == 4 and all(len(texts) == 1 for texts in acks.values())


def test_limit_takes_whole_units_and_dry_run_counts_a_shared_turn_once() -> None:
    rows = _rows(5)
    items = plan(rows, mode="sample", limit=2, seed=3, strata=["unit", "arm"])
    units = {w.row.unit for w in items}
    assert len(units) == 2 and len(items) == 6
    assert {w.row.cell["arm"] for w in items} == {"control", "treatment", "solo"}
    (main,) = estimate(items, mode="sample", model="local/x", judge_model=None)
    assert main.calls == 2 * (1 + 1 + 3)  # per unit: one shared turn, one solo turn, three answers
    assert main.completion_tokens == 2 * (8 + 8 + 3 * 2)


def test_shards_split_by_unit() -> None:
    rows = _rows(9)
    shards = [plan(rows, mode="sample", shard=Shard(i, 3)) for i in (1, 2, 3)]
    assert sum(len(s) for s in shards) == 27
    owners = [{w.row.unit for w in s} for s in shards]
    assert all(len(s) == 3 * len(o) for s, o in zip(shards, owners, strict=True))  # every unit whole
    assert not (owners[0] & owners[1]) and not (owners[1] & owners[2]) and not (owners[0] & owners[2])


def test_a_resumed_run_reuses_the_shared_turns_its_answers_saw(tmp_path: Path) -> None:
    suite = write_suite(tmp_path / "suite", _rows(4))
    out = tmp_path / "run"
    server = StubServer()
    api_base = server.start()
    try:
        config = RunConfig(suite_dir=suite, out=out, model="openai/stub", api_base=api_base, use_cache=False,
                           progress=False)
        run_suite(config)
        rows = {r.id: r for r in read_suite(suite).rows}
        results = out / "results.jsonl"
        kept = [line for line in results.read_text().splitlines()
                if '"treatment"' not in rows[line.split('"item_id":"')[1][:16]].model_dump_json()]
        results.write_text("\n".join(kept) + "\n")
        before = server.stats.requests
        summary = run_suite(config)
        after = server.stats.requests
    finally:
        server.stop()
    assert (summary.done, summary.resumed, after - before) == (12, 8, 4)  # 4 answers; no acknowledgment again
