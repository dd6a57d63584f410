"""One model call through litellm: response cache, rate limits, retries with backoff, error classes."""

from __future__ import annotations

import asyncio
import json
import os
import random
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from spec_audits.base.secrets import scrub, scrub_text  # noqa: E402
from spec_audits.contract.suite_terms import DECODE_KEYS  # noqa: E402
from spec_audits.local.names import LOCAL_PREFIX, is_local  # noqa: E402
from spec_audits.runner.services.cache import NoCache, ResponseCache, call_key  # noqa: E402
from spec_audits.runner.services.provider_errors import (  # noqa: E402
    FATAL,
    PERMANENT,
    UNREACHABLE,
    CallFailed,
    FatalError,
    advice,
    classify,
    reason,
)

UNREACHABLE_ATTEMPTS = 3  # attempts in a row finding no server before a run stops (about 3 s at --retry-base 1)


def answer_identity(model: str) -> str:
    """The model as the response cache knows it: a local model's `?threads=N` changes speed, not answers."""
    return model.split("?", 1)[0] if is_local(model) else model


class EmptyResponse(Exception):
    """The model answered with no content: retried like a dropped connection."""


@dataclass(frozen=True)
class Reply:
    """What one call returned; `top_logprobs` lists {token, logprob} for the first generated token."""

    text: str | None
    usage: dict[str, int]
    top_logprobs: list[dict[str, Any]] | None
    cached: bool
    latency_s: float


@dataclass(frozen=True)
class CallSettings:
    model: str
    api_base: str | None = None
    timeout_s: float = 120.0
    max_retries: int = 6
    retry_base_s: float = 1.0
    retry_max_s: float = 60.0
    rpm: float | None = None
    tpm: float | None = None


def short_reason(err: BaseException, limit: int = 240) -> str:
    """The error's first line, cut at a word boundary to at most `limit` characters, scrubbed of keys."""
    text = scrub(reason(err))
    if len(text) <= limit:
        return text
    return text[: limit - 1].rsplit(" ", 1)[0].rstrip(" ,;:-") + "…"


def own_error(err: Exception) -> BaseException | None:
    """What to re-raise instead of retrying: `err` itself unless it is the provider's (a litellm exception,
    which subclasses openai's, or an httpx error), or the exception of ours that litellm wrapped in it.

    litellm turns anything raised under it that is not a provider error (a bug in the local model's
    handler, its FatalError) into an APIConnectionError whose direct cause or context is that exception;
    a real provider error wraps litellm's, openai's or httpx's, or a socket's OSError."""
    import httpx
    import openai
    from litellm.llms.base_llm.chat.transformation import BaseLLMException

    if isinstance(err, EmptyResponse):
        return None
    if not isinstance(err, openai.OpenAIError | httpx.HTTPError):
        return err
    inner = err.__cause__ if err.__cause__ is not None else None if err.__suppress_context__ else err.__context__
    provider = openai.OpenAIError | httpx.HTTPError | BaseLLMException | OSError
    return inner if inner is not None and not isinstance(inner, provider) else None


class RateLimiter:
    """A token bucket holding one minute's allowance; None means unlimited. `clock` and `sleep` are the
    monotonic clock and the asyncio sleep (a test passes its own, so no test waits on real time)."""

    def __init__(self, per_minute: float | None, clock: Callable[[], float] = time.monotonic,
                 sleep: Callable[[float], Awaitable[None]] = asyncio.sleep) -> None:
        self.capacity = per_minute
        self.available = per_minute or 0.0
        self.clock, self.sleep = clock, sleep
        self.updated = clock()

    async def acquire(self, amount: float = 1.0) -> None:
        if not self.capacity:
            return
        amount = min(amount, self.capacity)
        while True:
            now = self.clock()
            self.available = min(self.capacity, self.available + (now - self.updated) * self.capacity / 60)
            self.updated = now
            if self.available >= amount:
                self.available -= amount
                return
            await self.sleep((amount - self.available) * 60 / self.capacity)


def _estimate_tokens(messages: list[dict[str, Any]], params: dict[str, Any]) -> int:
    return len(json.dumps(messages)) // 4 + int(params.get("max_tokens") or 0)


_REQUIRED = object()


def _field(value: Any, name: str, default: Any = _REQUIRED) -> Any:
    """value.name, or value[name] of a JSON object; a missing field without a default raises."""
    if isinstance(value, dict):
        return value[name] if default is _REQUIRED else value.get(name, default)
    return getattr(value, name) if default is _REQUIRED else getattr(value, name, default)


def extract(response: Any) -> dict[str, Any]:
    """What the cache keeps of a reply: litellm's ModelResponse, or the same chat.completion as JSON (a line of a
    provider's batch output), read the same way."""
    choice = _field(response, "choices")[0]
    usage = _field(response, "usage", None)
    logprobs = _field(choice, "logprobs", None)
    content = _field(logprobs, "content", None) if logprobs is not None else None
    top = None
    if content:
        first = content[0]
        entries = _field(first, "top_logprobs", None) or [first]
        top = [{"token": _scrubbed_token(_field(e, "token")), "logprob": float(_field(e, "logprob"))} for e in entries]
    text = _field(_field(choice, "message"), "content")
    return {  # a server may echo what it was sent: no key reaches the cache, results or a journal
        "text": scrub_text(text) if isinstance(text, str) else text,
        "usage": {k: int(_field(usage, k, 0) or 0) for k in ("prompt_tokens", "completion_tokens")},
        "top_logprobs": top,
    }


def _scrubbed_token(token: Any) -> Any:
    return scrub_text(token) if isinstance(token, str) else token


@dataclass
class ModelClient:
    """Calls one model, through the response cache, within its rate limits."""

    settings: CallSettings
    cache: ResponseCache | NoCache
    slot_prefix: str = ""  # a replicate run's calls are its own: never the cached answers of the run it repeats
    calls: int = 0
    hits: int = 0
    on_retry: Callable[[str | None], None] | None = None  # the reason of each retry; None once a call succeeds
    _registered: bool = False
    _opened: bool = False  # a first uncached call came back without a fatal error
    _stopped: FatalError | None = None  # ... or with this one
    _unreachable: int = 0  # attempts in a row that found nothing answering at the endpoint
    _retrying: bool = False
    _first: asyncio.Lock = field(init=False)
    _requests: RateLimiter = field(init=False)
    _tokens: RateLimiter = field(init=False)

    def __post_init__(self) -> None:
        self._first = asyncio.Lock()
        self._requests = RateLimiter(self.settings.rpm)
        self._tokens = RateLimiter(self.settings.tpm)

    async def call(
        self, messages: list[dict[str, Any]], params: dict[str, Any], slot: str, extras: dict[str, Any]
    ) -> Reply:
        """`params` are the recorded decode settings; `extras` are provider-only arguments (e.g. the
        local model's answer grammar). Both are part of the cache key."""
        key = self.key(messages, params, slot, extras)
        found = self.cache.get(key)
        if found is not None:
            self.hits += 1
            text = found["text"]  # an entry of a version that kept replies unscrubbed is scrubbed on the way out
            return Reply(scrub_text(text) if isinstance(text, str) else text, found["usage"], found["top_logprobs"],
                         cached=True, latency_s=0.0)
        await self.prepare()
        started = time.perf_counter()
        value = await self._first_alone(messages, {**params, **extras})
        self.cache.put(key, value)
        return Reply(
            value["text"],
            value["usage"],
            value["top_logprobs"],
            cached=False,
            latency_s=time.perf_counter() - started,
        )

    def key(self, messages: list[dict[str, Any]], params: dict[str, Any], slot: str, extras: dict[str, Any]) -> str:
        """The call's response-cache key (a batch line's custom_id), its arguments checked first: only decode
        settings ever reach a provider, live or in a batch."""
        _check_arguments(params, extras)
        return call_key(answer_identity(self.settings.model), self.settings.api_base, {**params, **extras}, messages,
                        self.slot_prefix + slot)

    async def prepare(self) -> None:
        """Register and load an embedded model before its first uncached call, so that loading does not
        count as that call's latency. A no-op for remote models."""
        if is_local(self.settings.model) and not self._registered:
            from spec_audits.local.model import register

            provider = register()
            await asyncio.to_thread(provider.model, self.settings.model.removeprefix(LOCAL_PREFIX))
            self._registered = True

    async def _first_alone(self, messages: list[dict[str, Any]], kwargs: dict[str, Any]) -> dict[str, Any]:
        """Make the call; until one uncached call has come back without a fatal error, one at a time, so a
        missing key or a dead endpoint stops the run after one call, not one per worker."""
        if not self._opened:
            async with self._first:
                if self._stopped is not None:
                    raise self._stopped
                if not self._opened:
                    try:
                        value = await self._with_retries(messages, kwargs)
                    except CallFailed:
                        self._opened = True
                        raise
                    except FatalError as err:
                        self._stopped = err  # the calls waiting for this one stop with it, uncalled
                        raise
                    self._opened = True
                    return value
        return await self._with_retries(messages, kwargs)

    async def _with_retries(self, messages: list[dict[str, Any]], kwargs: dict[str, Any]) -> dict[str, Any]:
        for attempt in range(self.settings.max_retries + 1):
            try:
                value = await self._once(messages, kwargs)
            except Exception as err:  # noqa: BLE001 - only provider errors are retried; own_error re-raises the rest
                ours = own_error(err)
                if ours is err:
                    raise
                if ours is not None:
                    raise ours from None  # litellm's wrapper says nothing that ours does not
                self._give_up_on(err, attempt)
                self._note_retry(short_reason(err, 120))
                await asyncio.sleep(self._backoff(attempt))
                continue
            self._unreachable = 0
            if self._retrying:
                self._note_retry(None)
            return value
        raise AssertionError("unreachable")

    def _give_up_on(self, err: Exception, attempt: int) -> None:
        """Raise FatalError for what retrying cannot fix, CallFailed when this call is done for; else return."""
        kind = classify(err)
        self._unreachable = self._unreachable + 1 if kind == UNREACHABLE else 0
        if kind == FATAL or self._unreachable >= UNREACHABLE_ATTEMPTS:
            raise FatalError(scrub(advice(err, kind, self.settings.model, self.settings.api_base))) from None
        if kind == PERMANENT or attempt == self.settings.max_retries:
            raise CallFailed(short_reason(err)) from None

    def _note_retry(self, why: str | None) -> None:
        self._retrying = why is not None
        if self.on_retry is not None:
            self.on_retry(why)

    def _backoff(self, attempt: int) -> float:
        delay: float = min(self.settings.retry_max_s, self.settings.retry_base_s * 2**attempt)
        return delay * random.uniform(0.5, 1.5)

    async def _once(self, messages: list[dict[str, Any]], kwargs: dict[str, Any]) -> dict[str, Any]:
        import litellm

        litellm.suppress_debug_info = True  # no "Provider List" / feedback banner on every error
        await self._requests.acquire()
        if self.settings.tpm:
            await self._tokens.acquire(_estimate_tokens(messages, kwargs))
        self.calls += 1
        response = await litellm.acompletion(
            model=self.settings.model,
            messages=messages,
            api_base=self.settings.api_base,
            timeout=self.settings.timeout_s,
            max_retries=0,
            num_retries=0,
            drop_params=True,
            **_placeholder_key(self.settings),
            **kwargs,
        )
        value = extract(response)
        if not value["text"] and not value["top_logprobs"]:
            raise EmptyResponse("the model returned no content")
        return value


SENT_PARAMS = frozenset(DECODE_KEYS) | {"logprobs", "top_logprobs"}
LOCAL_EXTRAS = frozenset({"answer_tokens", "forced_choice"})


def _check_arguments(params: dict[str, Any], extras: dict[str, Any]) -> None:
    """Only decode settings and the local model's grammar reach litellm: never an endpoint, key, header,
    mock or callback, whatever a suite row holds (spec_audits/contract/reader.py refuses such rows first)."""
    stray = sorted(set(params) - SENT_PARAMS) + sorted(set(extras) - LOCAL_EXTRAS)
    if stray:
        raise FatalError(f"refusing to send {', '.join(map(repr, stray))} to the model: not a decode setting")


def _placeholder_key(settings: CallSettings) -> dict[str, str]:
    """OpenAI-compatible servers often need no key, but the openai client insists on one."""
    needs = settings.model.startswith("openai/") and settings.api_base and not os.environ.get("OPENAI_API_KEY")
    return {"api_key": "no-key"} if needs else {}
