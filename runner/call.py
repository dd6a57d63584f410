"""One model call through litellm: response cache, rate limits, retries with backoff, error classes."""

from __future__ import annotations

import asyncio
import json
import os
import random
import re
import time
from dataclasses import dataclass, field
from typing import Any

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from runner.cache import NoCache, ResponseCache, call_key  # noqa: E402

LOCAL_PREFIX = "local/"
VERBOSE_ENV = "SPEC_LOCAL_VERBOSE"  # "1": llama.cpp logs what it does while the embedded model loads


def is_local(model: str) -> bool:
    """True for the embedded in-process models (`local/gemma-3-270m`, `local/<path.gguf>`)."""
    return model.startswith(LOCAL_PREFIX)


def answer_identity(model: str) -> str:
    """The model as the response cache knows it: a local model's `?threads=N` changes speed, not answers."""
    return model.split("?", 1)[0] if is_local(model) else model


class FatalError(Exception):
    """The run cannot go on (bad key, unknown model): stop at once with this message."""


class CallFailed(Exception):
    """This call failed for good (permanent error, or retries exhausted); the item records the reason."""


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


_SECRET_NAME = re.compile(r"KEY|TOKEN|SECRET|PASSWORD", re.IGNORECASE)


def scrub(text: str) -> str:
    """Remove the values of secret-looking environment variables from `text`."""
    for name, value in os.environ.items():
        if len(value) >= 8 and _SECRET_NAME.search(name) and value in text:
            text = text.replace(value, "***")
    return text


def short_reason(err: BaseException) -> str:
    lines = str(err).strip().splitlines()
    first = re.sub(r"^litellm\.\w+:\s*", "", lines[0] if lines else "")
    return scrub(f"{type(err).__name__}: {first}"[:240])


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


def classify(err: Exception) -> str:
    """'fatal' (stop the run), 'permanent' (fail the item) or 'transient' (retry) for a provider error."""
    import litellm

    if isinstance(err, litellm.AuthenticationError | litellm.PermissionDeniedError | litellm.NotFoundError):
        return "fatal"
    # litellm raises a plain BadRequestError, not its LiteLLMUnknownProvider, for a model without a provider
    if isinstance(err, litellm.BadRequestError) and "LLM Provider NOT provided" in str(err):
        return "fatal"
    permanent = (
        litellm.ContextWindowExceededError,
        litellm.ContentPolicyViolationError,
        litellm.BadRequestError,
        litellm.UnprocessableEntityError,
    )
    return "permanent" if isinstance(err, permanent) else "transient"


class RateLimiter:
    """A token bucket holding one minute's allowance; None means unlimited."""

    def __init__(self, per_minute: float | None) -> None:
        self.capacity = per_minute
        self.available = per_minute or 0.0
        self.updated = time.monotonic()

    async def acquire(self, amount: float = 1.0) -> None:
        if not self.capacity:
            return
        amount = min(amount, self.capacity)
        while True:
            now = time.monotonic()
            self.available = min(self.capacity, self.available + (now - self.updated) * self.capacity / 60)
            self.updated = now
            if self.available >= amount:
                self.available -= amount
                return
            await asyncio.sleep((amount - self.available) * 60 / self.capacity)


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
        top = [{"token": _field(e, "token"), "logprob": float(_field(e, "logprob"))} for e in entries]
    return {
        "text": _field(_field(choice, "message"), "content"),
        "usage": {k: int(_field(usage, k, 0) or 0) for k in ("prompt_tokens", "completion_tokens")},
        "top_logprobs": top,
    }


@dataclass
class ModelClient:
    """Calls one model, through the response cache, within its rate limits."""

    settings: CallSettings
    cache: ResponseCache | NoCache
    calls: int = 0
    hits: int = 0
    _registered: bool = False
    _requests: RateLimiter = field(init=False)
    _tokens: RateLimiter = field(init=False)

    def __post_init__(self) -> None:
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
            return Reply(found["text"], found["usage"], found["top_logprobs"], cached=True, latency_s=0.0)
        await self.prepare()
        started = time.perf_counter()
        value = await self._with_retries(messages, {**params, **extras})
        self.cache.put(key, value)
        return Reply(
            value["text"],
            value["usage"],
            value["top_logprobs"],
            cached=False,
            latency_s=time.perf_counter() - started,
        )

    def key(self, messages: list[dict[str, Any]], params: dict[str, Any], slot: str, extras: dict[str, Any]) -> str:
        return call_key(answer_identity(self.settings.model), self.settings.api_base, {**params, **extras}, messages,
                        slot)

    async def prepare(self) -> None:
        """Register and load an embedded model before its first uncached call, so that loading does not
        count as that call's latency. A no-op for remote models."""
        if is_local(self.settings.model) and not self._registered:
            from runner.local_model import register

            provider = register()
            await asyncio.to_thread(provider.model, self.settings.model.removeprefix(LOCAL_PREFIX))
            self._registered = True

    async def _with_retries(self, messages: list[dict[str, Any]], kwargs: dict[str, Any]) -> dict[str, Any]:
        for attempt in range(self.settings.max_retries + 1):
            try:
                return await self._once(messages, kwargs)
            except Exception as err:  # noqa: BLE001 - only provider errors are retried; own_error re-raises the rest
                ours = own_error(err)
                if ours is err:
                    raise
                if ours is not None:
                    raise ours from None  # litellm's wrapper says nothing that ours does not
                kind = classify(err)
                if kind == "fatal":
                    raise FatalError(f"{self.settings.model}: {short_reason(err)}") from None
                if kind == "permanent" or attempt == self.settings.max_retries:
                    raise CallFailed(short_reason(err)) from None
                await asyncio.sleep(self._backoff(attempt))
        raise AssertionError("unreachable")

    def _backoff(self, attempt: int) -> float:
        delay = min(self.settings.retry_max_s, self.settings.retry_base_s * 2**attempt)
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


def _placeholder_key(settings: CallSettings) -> dict[str, str]:
    """OpenAI-compatible servers often need no key, but the openai client insists on one."""
    needs = settings.model.startswith("openai/") and settings.api_base and not os.environ.get("OPENAI_API_KEY")
    return {"api_key": "no-key"} if needs else {}
