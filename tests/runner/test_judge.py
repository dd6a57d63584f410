"""A follow-up's judge: a `reply json` judge's reply parsed into label and reason, recorded with its raw text."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from spec_audits.base import exits
from spec_audits.cli import main
from spec_audits.contract.reader import read_results, read_suite
from spec_audits.contract.suite_model import SuiteRow
from spec_audits.contract.writer import suite_row
from spec_audits.runner.answers import parse_judge_json
from spec_audits.runner.execute import run_suite
from spec_audits.runner.plan import WorkItem, estimate
from spec_audits.runner.run_config import RunConfig, RunError
from tests.stub_server import StubConfig, StubServer
from tests.support import forced_choice_rows, write_suite

LABELS = ("ACK_AFFECTED", "ACK_DISCLAIMED", "DENIED")


@pytest.mark.parametrize(("text", "expected"), [
    ('{"label": "DENIED", "reason": "It saw no cue."}', ("DENIED", "It saw no cue.")),
    ('  {"reason": "r", "label": "ACK_AFFECTED"}\n', ("ACK_AFFECTED", "r")),
    ('```json\n{"label": "ACK_DISCLAIMED", "reason": "Named the survey, denied its effect."}\n```',
     ("ACK_DISCLAIMED", "Named the survey, denied its effect.")),
    ('```JSON {"label": "DENIED"} ```', ("DENIED", None)),  # no reason: the label still counts
    ('```\n{"label": " DENIED ", "reason": 3}\n```', ("DENIED", None)),  # a reason that is no string is dropped
    ('{"label": "UNCLEAR", "reason": "x"}', (None, None)),  # a label the judge was not given
    ('{"label": "denied"}', (None, None)),  # labels are exact
    ('{"label": ["DENIED"]}', (None, None)),
    ('{"reason": "no label"}', (None, None)),
    ('["DENIED"]', (None, None)),
    ("DENIED", (None, None)),  # a bare label is no JSON reply
    ('{"label": "DENIED"', (None, None)),
    ('The label is {"label": "DENIED"}', (None, None)),
    ('```json\n{"label": "DENIED"}\n``` and more', (None, None)),
    ("[" * 100_000, (None, None)),  # nested past the decoder's recursion limit
    ("", (None, None)),
    (None, (None, None)),
])
def test_parse_judge_json(text: str | None, expected: tuple[str | None, str | None]) -> None:
    assert parse_judge_json(text, LABELS) == expected


FENCED = '```json\n{"label": "DENIED", "reason": "It saw no cue."}\n```'
BROKEN = '{"label": "DENIED", "reason": "cut off'
UNKNOWN = '{"label": "MAYBE", "reason": "x"}'


CASES = ("fenced", "broken", "unknown", "label")


def _judged_rows() -> dict[str, SuiteRow]:
    """Case -> a row followed up by a judge: three answer JSON (the stub's scripted replies), one a label."""
    rows = {}
    for row, case in zip(forced_choice_rows(4, 1), CASES, strict=True):
        judge: dict[str, Any] = {"labels": list(LABELS), "prompt": f"CASE {case}\nReply: {{{{ reply }}}}",
                                 "reply": "json"}
        if case == "label":
            judge = {"labels": ["A", "B"], "prompt": "CASE label\nReply: {{ reply }}"}
        body = row.model_dump(exclude_none=True, exclude={"id"})
        rows[case] = suite_row({**body, "followups": [{"name": "probe", "content": "Why?", "judge": judge}]})
    return rows


def test_a_json_judge_records_label_reason_and_raw_reply(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    server = StubServer(StubConfig(replies=(("CASE fenced", FENCED), ("CASE broken", BROKEN),
                                            ("CASE unknown", UNKNOWN)), record=True))
    api_base = server.start()
    monkeypatch.setenv("OPENAI_BASE_URL", api_base)  # the judge has no --api-base: litellm reads this
    monkeypatch.setenv("OPENAI_API_KEY", "test")
    rows = _judged_rows()
    try:
        run_suite(RunConfig(suite_dir=write_suite(tmp_path / "suite", list(rows.values())), out=tmp_path / "run",
                            model="openai/stub", api_base=api_base, judge_model="openai/judge", progress=False))
    finally:
        server.stop()
    results = {r.item_id: r for r in read_results(tmp_path / "run" / "results.jsonl")}
    replies = {case: results[row.id].followups["probe"] for case, row in rows.items()}  # type: ignore[index]
    assert all(reply["response"] in ("A", "B") for reply in replies.values())  # the stub's follow-up reply
    label = replies["label"]["judge_response"]
    assert label in ("A", "B")
    assert {case: {k: v for k, v in reply.items() if k != "response"} for case, reply in replies.items()} == {
        "fenced": {"label": "DENIED", "reason": "It saw no cue.", "judge_response": FENCED},
        "broken": {"label": None, "reason": None, "judge_response": BROKEN},
        "unknown": {"label": None, "reason": None, "judge_response": UNKNOWN},
        "label": {"label": label, "judge_response": label},
    }
    judge_calls = {b["messages"][0]["content"].split("\n")[0][len("CASE "):]: b for b in server.stats.bodies
                   if b["model"] == "judge"}
    assert {case: (len(b["messages"]), b["messages"][0]["content"], b["max_tokens"], b["temperature"])
            for case, b in judge_calls.items()} == {
        case: (1, f"CASE {case}\nReply: {replies[case]['response']}", 16 if case == "label" else 256, 0.0)
        for case in CASES}


def test_the_dry_run_counts_a_json_judges_longer_replies() -> None:
    work = [WorkItem(row, 0) for row in _judged_rows().values()]
    _, judge = estimate(work, mode="sample", model="openai/gpt-4o-mini", judge_model="openai/gpt-4o")
    assert (judge.calls, judge.completion_tokens) == (4, 3 * 256 + 16)


def test_a_followup_turn_is_sent_with_its_own_decode_settings(tmp_path: Path) -> None:
    row = forced_choice_rows(1, 1)[0]
    body = row.model_dump(exclude_none=True, exclude={"id"})
    probed = suite_row({**body, "followups": [{"name": "probe", "content": "Why?", "decode": {"max_tokens": 200}}]})
    server = StubServer(StubConfig(record=True))
    api_base = server.start()
    try:
        run_suite(RunConfig(suite_dir=write_suite(tmp_path / "suite", [probed]), out=tmp_path / "run",
                            model="openai/stub", api_base=api_base, progress=False))
    finally:
        server.stop()
    sent = [(b["messages"][-1]["content"], b["max_tokens"]) for b in server.stats.bodies]
    assert sent == [(row.messages[-1].content, row.decode["max_tokens"]), ("Why?", 200)]
    [main] = estimate([WorkItem(probed, 0)], mode="sample", model="openai/gpt-4o-mini", judge_model=None)
    assert (main.calls, main.completion_tokens) == (2, row.decode["max_tokens"] + 200)


def test_a_followup_gets_the_first_answer_and_its_judge_the_conversation(tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    row = forced_choice_rows(1, 1)[0]
    judge = {"labels": ["A", "B"], "prompt": "CASE conversation\n{{ conversation }}\nReply: {{ reply }}"}
    followup = {"name": "probe", "content": "You said {{ answer }}; {{ reply }} stays. Why?", "judge": judge}
    probed = suite_row({**row.model_dump(exclude_none=True, exclude={"id"}), "followups": [followup]})
    server = StubServer(StubConfig(record=True))
    api_base = server.start()
    monkeypatch.setenv("OPENAI_BASE_URL", api_base)
    monkeypatch.setenv("OPENAI_API_KEY", "test")
    try:
        run_suite(RunConfig(suite_dir=write_suite(tmp_path / "suite", [probed]), out=tmp_path / "run",
                            model="openai/stub", api_base=api_base, judge_model="openai/judge", progress=False))
    finally:
        server.stop()
    [result] = read_results(tmp_path / "run" / "results.jsonl")
    reply = result.followups["probe"]["response"]  # type: ignore[index]
    asked = f"You said {result.answer}; {{{{ reply }}}} stays. Why?"  # only the follow-up's own name is filled
    main, second, judged = server.stats.bodies
    assert second["messages"][-1] == {"role": "user", "content": asked}
    before = "".join(f"{m.role.capitalize()}: {m.content}\n\n" for m in row.messages)  # system and prompt
    assert judged["messages"] == [{"role": "user", "content": f"CASE conversation\n{before}Assistant: "
                                   f"{result.response}\n\nUser: {asked}\n\nAssistant: {reply}\nReply: {reply}"}]


def test_a_judge_with_no_model_is_refused_before_any_call(tmp_path: Path) -> None:
    """Without a model every label would be null: the run stops at once and says what to write instead."""
    rows = _judged_rows()
    suite = write_suite(tmp_path / "suite", list(rows.values()))
    server = StubServer(StubConfig(record=True))
    api_base = server.start()
    try:
        with pytest.raises(RunError) as err:
            run_suite(RunConfig(suite_dir=suite, out=tmp_path / "run", model="openai/stub", api_base=api_base,
                                progress=False))
    finally:
        server.stop()
    assert str(err.value) == (
        f"{suite / 'suite.jsonl'}, row {read_suite(suite).rows[0].id}: follow-up 'probe' has a judge with no model, "
        "so every label would be null. Give the run one with --judge-model provider/model, or write model "
        "\"provider/model\" in the judge clause of followup probe and compile again")
    assert server.stats.requests == 0 and not (tmp_path / "run").exists()
    dry = CliRunner().invoke(main, ["run", str(suite), "--model", "openai/stub", "--dry-run"])
    assert dry.exit_code == exits.ERROR and isinstance(dry.exception, SystemExit)
    assert dry.output == f"Error: {err.value}\n"
