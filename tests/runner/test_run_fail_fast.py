"""A run that cannot succeed says why at once: a missing key or a dead endpoint stops `spec run` after a call
or three, with what, which model and what to do; an error that repeats item after item stops it too;
transient errors keep their retries with the reason on the progress line; each outcome has its exit code."""

from __future__ import annotations

import socket
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import litellm
import pytest
from click.testing import CliRunner, Result

from spec_audits.base import exits
from spec_audits.cli import main
from spec_audits.contract.reader import read_results
from spec_audits.contract.writer import suite_row
from spec_audits.runner.call import UNREACHABLE_ATTEMPTS
from spec_audits.runner.failures import REPEATS
from tests.stub_server import StubConfig, StubServer, serving
from tests.support import forced_choice_rows, write_suite

KEYS = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "OPENAI_BASE_URL", "OPENAI_API_BASE")


@pytest.fixture
def calls(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every litellm.acompletion attempt the run makes (its model), counted in-process; no key in the env."""
    for name in KEYS:
        monkeypatch.delenv(name, raising=False)
    made: list[str] = []
    real = litellm.acompletion

    async def counted(**kwargs: Any) -> Any:
        made.append(kwargs["model"])
        return await real(**kwargs)

    monkeypatch.setattr(litellm, "acompletion", counted)
    return made


@pytest.fixture
def stub(request: pytest.FixtureRequest) -> Iterator[StubServer]:
    yield from serving(getattr(request, "param", None))


def _suite(folder: Path, n: int, too_long: set[int]) -> Path:
    """A suite of `n` one-sample rows whose rows `too_long` (by position) the stub refuses as too long for its
    context; built whole, so its manifest's hashes hold."""
    rows = []
    for index, row in enumerate(forced_choice_rows(n, 1)):
        body = row.model_dump(exclude={"id"}, exclude_none=True)
        if index in too_long:
            body["messages"][-1]["content"] += " TOO_LONG"
        rows.append(suite_row(body))
    return write_suite(folder, rows)


def _run(*args: str) -> Result:
    return CliRunner().invoke(main, ["run", *args, "--no-progress"])


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_a_missing_openai_key_stops_the_run_after_one_call(
    make_suite: Callable[..., Path], tmp_path: Path, calls: list[str], stub: StubServer,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", f"http://127.0.0.1:{stub.port}/v1")  # should anything get out: the stub
    result = _run(str(make_suite(n=30)), "--model", "openai/gpt-4o-mini", "--out", str(tmp_path / "run"))
    assert result.exit_code == exits.STOPPED, result.output
    assert isinstance(result.exception, SystemExit)  # a message, no traceback
    assert "run stopped: openai/gpt-4o-mini: no API key" in result.output
    assert "Set OPENAI_API_KEY in the environment" in result.output
    assert calls == ["openai/gpt-4o-mini"] and stub.stats.requests == 0
    assert read_results(tmp_path / "run" / "results.jsonl") == []


def test_a_missing_anthropic_key_is_named_whole(
    make_suite: Callable[..., Path], tmp_path: Path, calls: list[str]
) -> None:
    result = _run(str(make_suite(n=4)), "--model", "anthropic/claude-3-5-haiku-20241022", "--out", str(tmp_path / "r"))
    assert result.exit_code == exits.STOPPED, result.output
    stopped = result.output.split("no API key (", 1)[1]
    reason, advice = stopped.split("). Set ", 1)
    assert reason.startswith("AuthenticationError: Missing Anthropic API Key") and "…" not in reason
    assert reason.endswith(("`", ")", ".", "'")) or reason[-1].isalnum()  # ends on a whole word
    assert advice.startswith("ANTHROPIC_API_KEY in the environment")
    assert calls == ["anthropic/claude-3-5-haiku-20241022"]


def test_an_unreachable_endpoint_stops_the_run_after_a_few_attempts(
    make_suite: Callable[..., Path], tmp_path: Path, calls: list[str]
) -> None:
    base = f"http://127.0.0.1:{_closed_port()}/v1"
    result = _run(str(make_suite(n=40)), "--model", "openai/my-model", "--api-base", base, "--retry-base", "0.05",
                  "--out", str(tmp_path / "run"))
    assert result.exit_code == exits.STOPPED, result.output
    assert f"run stopped: openai/my-model: cannot reach {base}" in result.output
    assert "Start the server, or check --api-base" in result.output
    assert len(calls) == UNREACHABLE_ATTEMPTS  # one call at a time until the endpoint has answered once
    assert read_results(tmp_path / "run" / "results.jsonl") == []


@pytest.mark.parametrize("stub", [StubConfig(reject_all=400)], indirect=True)
def test_the_same_error_item_after_item_stops_the_run_recording_none(
    make_suite: Callable[..., Path], tmp_path: Path, stub: StubServer
) -> None:
    result = _run(str(make_suite(n=30)), "--model", "openai/stub", "--api-base", f"http://127.0.0.1:{stub.port}/v1",
                  "--concurrency", "2", "--out", str(tmp_path / "run"))
    assert result.exit_code == exits.STOPPED, result.output
    assert f"{REPEATS} items in a row failed with the same error: BadRequestError" in result.output
    assert REPEATS <= stub.stats.requests <= REPEATS + 1
    assert read_results(tmp_path / "run" / "results.jsonl") == []  # a rerun after the fix asks them again


@pytest.mark.parametrize("stub", [StubConfig(fault_rate=1.0, faults=("429",))], indirect=True)
def test_transient_errors_are_retried_with_the_reason_on_the_progress_line(
    make_suite: Callable[..., Path], tmp_path: Path, stub: StubServer
) -> None:
    result = CliRunner().invoke(main, ["run", str(make_suite(n=2, samples=1)), "--model", "openai/stub", "--api-base",
                                       f"http://127.0.0.1:{stub.port}/v1", "--max-retries", "2", "--retry-base",
                                       "0.01", "--out", str(tmp_path / "run")])
    assert result.exit_code == exits.PARTIAL, result.output
    assert "retrying: RateLimitError: OpenAIException - injected 429" in result.output  # a line outside a terminal
    assert stub.stats.requests == 2 * 3
    rows = read_results(tmp_path / "run" / "results.jsonl")
    assert [r.error for r in rows] == ["RateLimitError: OpenAIException - injected 429"] * 2
    assert "2 item(s) failed" in result.output and "--retry-failed" in result.output


def test_exit_status_zero_only_when_every_item_is_answered_and_four_when_some_failed(
    tmp_path: Path, stub: StubServer
) -> None:
    base = ["--model", "openai/stub", "--api-base", f"http://127.0.0.1:{stub.port}/v1"]
    assert _run(str(_suite(tmp_path / "good", 6, set())), *base, "--out", str(tmp_path / "ok")).exit_code == exits.OK
    partial = _run(str(_suite(tmp_path / "one_long", 6, {0})), *base, "--out", str(tmp_path / "partial"))
    assert partial.exit_code == exits.PARTIAL, partial.output
    assert "5 answered, 1 failed of 6" in partial.output


def test_failed_rows_are_never_marked_cached_and_hits_are(tmp_path: Path, stub: StubServer) -> None:
    suite = _suite(tmp_path / "suite", 4, {0})
    base = ["--model", "openai/stub", "--api-base", f"http://127.0.0.1:{stub.port}/v1"]
    for name in ("first", "second"):
        _run(str(suite), *base, "--out", str(tmp_path / name))
    first, second = (read_results(tmp_path / name / "results.jsonl") for name in ("first", "second"))
    assert [(r.error is None, r.cached) for r in first].count((True, False)) == 3
    assert sorted((r.error is None, r.cached) for r in second) == [(False, False), (True, True), (True, True),
                                                                    (True, True)]
    assert stub.stats.requests == 3 + 2  # the failed item is asked again; the answered ones come from the cache


def test_prompts_too_long_for_the_model_fail_their_items_however_many_in_a_row(
    tmp_path: Path, stub: StubServer
) -> None:
    suite = _suite(tmp_path / "suite", REPEATS + 2, set(range(REPEATS + 2)))
    result = _run(str(suite), "--model", "openai/stub", "--api-base", f"http://127.0.0.1:{stub.port}/v1",
                  "--out", str(tmp_path / "run"))
    assert result.exit_code == exits.PARTIAL, result.output
    failed = read_results(tmp_path / "run" / "results.jsonl")
    assert len(failed) == REPEATS + 2 and all(r.error.startswith("ContextWindowExceededError:") for r in failed)
