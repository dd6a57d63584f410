"""Seed 004's authors' protocol in the runner: a free decision read by a second, extraction call (their
prompt and pattern), and an acknowledgment per arm that stays two calls even when the cache is on."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from spec_audits.contract.reader import read_results
from spec_audits.contract.suite_model import EXTRACTION_SLOT, SuiteRow
from spec_audits.contract.writer import suite_row
from spec_audits.runner.answers import parse_option_number
from spec_audits.runner.execute import run_suite
from spec_audits.runner.plan import estimate, plan
from spec_audits.runner.run_config import RunConfig
from tests.stub_server import StubConfig, StubServer
from tests.support import write_suite

TOKENS = ("1", "2", "3")
EXTRACTION = ("You will be given answer options from a decision-making task and a written answer.\n--- OPTIONS ---\n"
              f"Option 1: low\nOption 2: mid\nOption 3: high\n\n--- ANSWER ---\n{EXTRACTION_SLOT}\n\n"
              "--- INSTRUCTION ---\nExtract the option selected in the above answer.")


@pytest.mark.parametrize(("reply", "expected"), [
    ("Option 2", "2"), ("option 3.", "3"), ("I read Option 1, then option 3", "1"), ("Option 03", "3"),
    ("No option selected", None), ("Options 2", None), ("Option2", None), ("OPTION 2", None), ("Option 4", None),
    ("", None), (None, None),
])
def test_the_extraction_reply_is_read_with_the_authors_pattern(reply: str | None, expected: str | None) -> None:
    """\\b[oO]ption (\\d+)\\b, the first match; a number outside the displayed options is an abstention."""
    assert parse_option_number(reply, TOKENS) == expected


def _rows(units: int, per_arm: bool) -> list[SuiteRow]:
    rows = []
    for unit in range(units):
        for arm in ("control", "treatment"):
            body: dict[str, Any] = {
                "messages": [{"role": "user", "content": f"Situation {unit}."},
                             {"role": "assistant", "generate": True,
                              "share": f"u{unit}|ack" + (f"|{arm}" if per_arm else "")},
                             {"role": "user", "content": f"Decide ({arm}): low, mid or high?"}],
                "samples": 1, "cell": {"unit": f"u{unit}", "arm": arm}, "answers": {t: t for t in TOKENS},
                "decode": {"temperature": 0.0}, "unit": f"u{unit}",
                "extract": {"prompt": EXTRACTION, "parse": "option_number"},
            }
            rows.append(suite_row(body))
    return sorted(rows, key=lambda r: r.id)


def _run(tmp_path: Path, suite: Path, outs: tuple[str, ...] = ("run",)) -> list[tuple[int, list[dict[str, Any]]]]:
    """(requests, request bodies) of each run into `outs`, one stub server and one cache for all."""
    server = StubServer(StubConfig(replies=(("--- INSTRUCTION ---", "The answer picks Option 2."),), record=True))
    api_base = server.start()
    seen: list[tuple[int, list[dict[str, Any]]]] = []
    try:
        for out in outs:
            before = server.stats.requests
            run_suite(RunConfig(suite_dir=suite, out=tmp_path / out, model="openai/stub", api_base=api_base,
                                cache_path=tmp_path / "cache.db", concurrency=2, progress=False))
            seen.append((server.stats.requests - before, server.stats.bodies[before:]))
        return seen
    finally:
        server.stop()


def test_each_arm_makes_its_own_acknowledgment_and_the_decision_is_read_by_the_extraction_call(
        tmp_path: Path) -> None:
    suite = write_suite(tmp_path / "suite", _rows(2, per_arm=True))
    (requests, bodies), (again, _) = _run(tmp_path, suite, ("run", "again"))
    assert requests == 2 * 2 * 3  # per unit and arm: acknowledgment, decision, extraction
    results = read_results(tmp_path / "run" / "results.jsonl")
    assert {(r.answer, r.extraction) for r in results} == {("2", "The answer picks Option 2.")}
    extractions = [b for b in bodies if "--- INSTRUCTION ---" in b["messages"][-1]["content"]]
    assert len(extractions) == 4 and all(len(b["messages"]) == 1 and "max_tokens" not in b for b in extractions)
    decisions = {r.response for r in results}
    for body in extractions:  # the decision in the slot, once; the slot itself gone
        content = body["messages"][0]["content"]
        assert EXTRACTION_SLOT not in content
        assert content.split("--- ANSWER ---\n")[1].split("\n\n--- INSTRUCTION")[0] in decisions
    assert again == 0  # a second run: every call, both arms' acknowledgments included, comes from the cache


def test_the_papers_shared_acknowledgment_is_one_call_for_both_arms(tmp_path: Path) -> None:
    suite = write_suite(tmp_path / "suite", _rows(2, per_arm=False))
    ((requests, _),) = _run(tmp_path, suite)
    assert requests == 2 * (1 + 2 * 2)  # per unit: one acknowledgment, then each arm's decision and extraction


@pytest.mark.parametrize(("per_arm", "calls"), [(True, 2 * 2 * 3), (False, 2 * (1 + 2 * 2))])
def test_the_dry_run_counts_the_extraction_and_each_acknowledgment(per_arm: bool, calls: int) -> None:
    (main,) = estimate(plan(_rows(2, per_arm), mode="sample"), mode="sample", model="local/x", judge_model=None)
    assert main.calls == calls


def test_a_suite_row_cannot_bring_its_own_extraction_pattern() -> None:
    """A stranger's suite names one of our parsers; it cannot hand the runner a regular expression."""
    body = _rows(1, per_arm=True)[0].model_dump(exclude_none=True)
    for extract in ({"prompt": EXTRACTION, "parse": r"(a+)+$"},
                    {"prompt": EXTRACTION, "parse": "option_number", "pattern": r"(a+)+$"}):
        with pytest.raises(ValidationError):
            SuiteRow.model_validate({**body, "extract": extract})


def test_a_decision_holding_the_slot_is_put_in_once_and_never_expanded(tmp_path: Path) -> None:
    suite = write_suite(tmp_path / "suite", _rows(1, per_arm=True))
    server = StubServer(StubConfig(replies=(("--- INSTRUCTION ---", "Option 3"), ("Decide", "I pick {{ answer }}.")),
                                   record=True))
    api_base = server.start()
    try:
        run_suite(RunConfig(suite_dir=suite, out=tmp_path / "run", model="openai/stub", api_base=api_base,
                            use_cache=False, concurrency=1, progress=False))
    finally:
        server.stop()
    extractions = [b["messages"][0]["content"] for b in server.stats.bodies
                   if "--- INSTRUCTION ---" in b["messages"][-1]["content"]]
    assert len(extractions) == 2
    assert all(text == EXTRACTION.replace(EXTRACTION_SLOT, "I pick {{ answer }}.") for text in extractions)
    assert {r.answer for r in read_results(tmp_path / "run" / "results.jsonl")} == {"3"}
