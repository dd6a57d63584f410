"""Every way a command falls short has its own exit status (spec_audits/base/exits.py, docs/running.md "Exit status"),
with a message and never a traceback: refused input 1, usage 2, a provider that stops the command 3, a
partial run 4 (tests/runner/test_run_fail_fast.py), nothing to score 5, a generate whose call failed 6."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from spec_audits.base import exits
from spec_audits.cli import main
from spec_audits.contract.reader import read_results
from tests.stub_server import StubConfig, StubServer, serving
from tests.support import ROOT, repeat_message

SPEC = ROOT / "specs" / "cognitive_bias.spec"


@pytest.fixture
def stub(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[StubServer]:
    """A stub that the openai provider reaches through OPENAI_BASE_URL (spec generate has no --api-base)."""
    for server in serving(getattr(request, "param", None)):
        monkeypatch.setenv("OPENAI_BASE_URL", f"http://127.0.0.1:{server.port}/v1")
        yield server


def _spec(*args: str) -> Result:
    result = CliRunner().invoke(main, list(args))
    assert isinstance(result.exception, SystemExit) or result.exception is None, result.exception
    return result


def _run_on(stub: StubServer, suite: Path, run: Path) -> Result:
    return _spec("run", str(suite), "--model", "openai/stub", "--api-base", f"http://127.0.0.1:{stub.port}/v1",
                 "--out", str(run), "--no-progress")


def test_generate_without_a_key_stops_at_once_writing_nothing(
    tmp_path: Path, stub: StubServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    out = tmp_path / "bank.csv"
    result = _spec("generate", str(SPEC), "--model", "openai/gpt-4o", "--jury", "openai/gpt-4o-mini", "--limit", "1",
                   "-o", str(out))
    assert result.exit_code == exits.STOPPED, result.output
    assert result.output.startswith("Error: generate stopped: openai/gpt-4o: no API key (")
    assert "Set OPENAI_API_KEY in the environment" in result.output and "nothing was written" in result.output
    assert stub.stats.requests == 0 and not out.exists() and not out.with_suffix(".json").exists()


@pytest.mark.parametrize("stub", [StubConfig(reject_all=400)], indirect=True)
def test_generate_whose_call_fails_exits_6_writing_nothing(
    tmp_path: Path, stub: StubServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key")
    out = tmp_path / "bank.csv"
    result = _spec("generate", str(SPEC), "--model", "openai/gpt-4o", "--jury", "openai/gpt-4o-mini", "--limit", "1",
                   "-o", str(out))
    assert result.exit_code == exits.CALL_FAILED, result.output
    assert result.output.startswith("Error: generate failed: a model call failed after its retries: BadRequestError")
    assert stub.stats.requests == 1 and not out.exists()


UNREAD = '3 replies gave no valid answer (the most common, 3 times: "I cannot choose.")'
NOTHING = {  # why the run has nothing to score: what `spec run` says, then `spec score`'s error after "Error: RUN: "
    "failed": (StubConfig(reject_all=400), ["spec run: 3 item(s) failed"],
               "no answered item (3 failed; the first failed with: BadRequestError: OpenAIException - rejected by "
               "the stub), so nothing to score. Fix the cause, then rerun `spec run` with --retry-failed\n"),
    "unreadable": (StubConfig(invalid_rate=1.0), ["{run}: 3 answered, 0 failed of 3", "{run}: " + UNREAD,
                                                  "spec run: {run}: no reply of 3 could be read, so nothing can be "
                                                  "scored."],
                   f"no scorable answer: {UNREAD}, so nothing to score. Read the replies in results.jsonl: the answer "
                   "form, the prompt's instructions or max_tokens may not fit this model\n"),
}


@pytest.mark.parametrize(("stub", "why"), [(c, why) for why, (c, _, _) in NOTHING.items()], indirect=["stub"])
def test_a_run_with_nothing_to_score_exits_4_and_its_score_exits_5_writing_nothing(
    make_suite: Callable[..., Path], tmp_path: Path, stub: StubServer, why: str
) -> None:
    """Every call failed, or every call succeeded but no reply holds a valid answer: neither is a success."""
    _, said, error = NOTHING[why]
    run = tmp_path / "run"
    ran = _run_on(stub, make_suite(n=3, samples=1), run)
    assert ran.exit_code == exits.PARTIAL, ran.output
    assert all(line.format(run=run) in ran.output for line in said), ran.output
    scored = _spec("score", str(run))
    assert scored.exit_code == exits.NO_DATA, scored.output
    assert scored.output == f"Error: {run}: {error}"
    assert not (run / "score").exists()
    path = run / "results.jsonl"  # a row given twice is refused, never counted twice in that message
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    path.write_text("".join([*lines, lines[0]]), encoding="utf-8")
    scored = _spec("score", str(run))
    first = json.loads(lines[0])
    kinds = "failed then failed" if why == "failed" else "answered then answered"
    assert scored.exit_code == 1 and scored.output == repeat_message(path, 4, first["item_id"], 0, 1, kinds)


@pytest.mark.parametrize("stub", [StubConfig(invalid_rate=0.5, seed=3)], indirect=True)
def test_a_run_with_some_unreadable_replies_counts_them_and_succeeds(
    make_suite: Callable[..., Path], tmp_path: Path, stub: StubServer
) -> None:
    run = tmp_path / "run"
    ran = _run_on(stub, make_suite(n=8, samples=1), run)
    assert ran.exit_code == exits.OK, ran.output
    unread = sum(row.answer is None for row in read_results(run / "results.jsonl"))
    assert 0 < unread < 8, "the stub's seed should leave some replies unreadable and some not"
    assert f"{run}: {unread} repl" in ran.output and "gave no valid answer (the most common" in ran.output
    assert "nothing can be scored" not in ran.output


def test_refused_input_exits_1_and_usage_2(tmp_path: Path) -> None:
    bad = tmp_path / "bad.spec"
    bad.write_text("suite x\nfactor\n", encoding="utf-8")
    assert _spec("compile", str(bad), "-o", str(tmp_path / "out")).exit_code == exits.ERROR
    assert _spec("merge", str(tmp_path), "--out", str(tmp_path / "m")).exit_code == exits.ERROR
    assert _spec("run", str(tmp_path), "--no-such-option").exit_code == exits.USAGE


def test_help_lists_the_exit_codes() -> None:
    assert exits.HELP.replace(" ", "") in _spec("--help").output.replace("\n", "").replace(" ", "")
    for command, code in (("run", "4 finished with failed items"), ("score", "5 the runs hold no answered item"),
                          ("generate", "6 a call failed")):
        assert code in " ".join(_spec(command, "--help").output.split())
