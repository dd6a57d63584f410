"""Provider errors are classified by litellm's exception types; our own exceptions propagate, never retried."""

from __future__ import annotations

import asyncio
from typing import Any

import litellm
import pytest
from litellm import CustomLLM

from spec_audits.runner.call import CallSettings, ModelClient
from spec_audits.runner.services.cache import NoCache
from spec_audits.runner.services.provider_errors import CallFailed, FatalError

MESSAGES = [{"role": "user", "content": "A or B?"}]


class Raising(CustomLLM):
    """A litellm custom provider whose every call raises `error` (counting the calls)."""

    def __init__(self, error: Exception) -> None:
        super().__init__()
        self.error = error
        self.calls = 0

    async def acompletion(self, *args: Any, **kwargs: Any) -> Any:
        self.calls += 1
        raise self.error


def _raising_client(monkeypatch: pytest.MonkeyPatch, error: Exception, retries: int = 2) -> tuple[Raising, ModelClient]:
    """A ModelClient of the provider `raising/x`, whose every call raises `error`."""
    handler = Raising(error)
    monkeypatch.setattr(litellm, "custom_provider_map", [{"provider": "raising", "custom_handler": handler}])
    client = ModelClient(CallSettings("raising/x", max_retries=retries, retry_base_s=0.0), NoCache())
    return handler, client


def _run(client: ModelClient) -> Any:
    return asyncio.run(client.call(MESSAGES, {"max_tokens": 1}, "0/answer0", {}))


def test_a_bug_of_ours_under_litellm_propagates_unretried(monkeypatch: pytest.MonkeyPatch) -> None:
    handler, client = _raising_client(monkeypatch, AttributeError("'NoneType' object has no attribute 'text'"))
    with pytest.raises(AttributeError, match="no attribute 'text'"):
        _run(client)
    assert handler.calls == 1


def test_a_bug_of_ours_outside_litellm_propagates_unretried(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = []

    async def broken(**kwargs: Any) -> Any:
        calls.append(kwargs)
        return object()  # no .choices: _extract fails with an AttributeError of ours

    monkeypatch.setattr(litellm, "acompletion", broken)
    client = ModelClient(CallSettings("openai/x", max_retries=3, retry_base_s=0.0), NoCache())
    with pytest.raises(AttributeError, match="choices"):
        _run(client)
    assert len(calls) == 1


def test_a_fatal_error_raised_under_litellm_stops_the_run(monkeypatch: pytest.MonkeyPatch) -> None:
    handler, client = _raising_client(monkeypatch, FatalError("local model threads must be a whole number"))
    with pytest.raises(FatalError, match="^local model threads must be a whole number$"):
        _run(client)
    assert handler.calls == 1


def test_a_transient_provider_error_is_retried_then_fails_the_item(monkeypatch: pytest.MonkeyPatch) -> None:
    error = litellm.RateLimitError(message="slow down", model="x", llm_provider="raising")
    handler, client = _raising_client(monkeypatch, error, retries=2)
    with pytest.raises(CallFailed, match="^RateLimitError: slow down$"):
        _run(client)
    assert handler.calls == 3


@pytest.mark.parametrize(
    ("error", "escapes", "calls"),
    [
        (litellm.ContextWindowExceededError(message="too long", model="x", llm_provider="raising"), CallFailed, 1),
        (litellm.AuthenticationError(message="bad key", model="x", llm_provider="raising"), FatalError, 1),
        (litellm.Timeout(message="late", model="x", llm_provider="raising"), CallFailed, 3),
        (litellm.InternalServerError(message="500", model="x", llm_provider="raising"), CallFailed, 3),
    ],
)
def test_provider_errors_by_type(
    monkeypatch: pytest.MonkeyPatch, error: Exception, escapes: type[Exception], calls: int
) -> None:
    handler, client = _raising_client(monkeypatch, error, retries=2)
    with pytest.raises(escapes):
        _run(client)
    assert handler.calls == calls
