"""A loopback OpenAI-compatible chat server for tests and benchmarks, with injected faults, and OpenAI's
files and batches endpoints (tests/stub_batches.py).

Binds 127.0.0.1 only and lives at most `lifetime_s`. Answers "A" or "B" (by a hash of the request; `tokens`
another set, e.g. yes and no), with logprobs over them when asked (0.7 to the answer), or a scripted reply
where the last message holds one of the `replies` markers. A fraction `fault_rate` of requests instead gets
one of `faults`: 429, 500, timeout (hangs past the client's timeout), malformed (invalid JSON), empty (no
content), drop (connection closed without a reply). Prompts containing TOO_LONG get a 400 context error.

Run alone (for benchmarks): python tests/stub_server.py --latency 0.05  -> prints the port.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import math
import random
import sys
import threading
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from aiohttp import web

if __name__ == "__main__":  # run alone: the repository root is not on the path
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tests.stub_batches import BatchEndpoints  # noqa: E402

FAULTS = ("429", "500", "timeout", "malformed", "empty", "drop")


@dataclass
class StubConfig:
    fault_rate: float = 0.0
    faults: tuple[str, ...] = FAULTS
    latency_s: float = 0.0
    hang_s: float = 5.0
    reject_all: int | None = None  # e.g. 401: every request gets this status
    invalid_rate: float = 0.0  # answers that are no valid token ("I cannot choose.")
    invalid_hash_rate: float = 0.0  # the same, for requests picked by their body's hash (whatever the order)
    logprobs: bool = True  # False: like a server that ignores the logprobs parameter
    tokens: tuple[str, ...] = ("A", "B")  # the answers it gives, by a hash of the request
    seed: int = 0
    lifetime_s: float = 600.0
    # (marker, content): a request whose last message contains the marker gets that content (e.g. a judge's JSON)
    replies: tuple[tuple[str, str], ...] = ()
    record: bool = False  # keep every request body in StubStats.bodies


@dataclass
class StubStats:
    requests: int = 0
    faults: Counter[str] = field(default_factory=Counter)
    auth_headers: set[str] = field(default_factory=set)
    bodies: list[dict] = field(default_factory=list)


def _digest(body: dict) -> bytes:
    return hashlib.sha256(json.dumps(body, sort_keys=True).encode()).digest()


def _answer(body: dict, tokens: tuple[str, ...] = ("A", "B")) -> str:
    return tokens[_digest(body)[0] % len(tokens)]


def _completion(body: dict, content: str | None, logprobs: bool = True, tokens: tuple[str, ...] = ("A", "B")) -> dict:
    """The reply `content`; with logprobs (when asked and `content` is one of `tokens`) 0.7 to it, the rest shared
    (the last token's share is 1 minus the others', as it always was for A and B)."""
    choice: dict = {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": content}}
    if logprobs and body.get("logprobs") and content in tokens:
        shares = [0.7 if token == content else 0.3 / (len(tokens) - 1) for token in tokens[:-1]]
        shares.append(1 - sum(shares))
        top = [{"token": token, "logprob": math.log(p)} for token, p in zip(tokens, shares, strict=True)]
        entry = {"token": content, "logprob": top[tokens.index(content)]["logprob"], "top_logprobs": top}
        choice["logprobs"] = {"content": [entry]}
    return {
        "id": "stub",
        "object": "chat.completion",
        "created": 0,
        "model": body.get("model", "stub"),
        "choices": [choice],
        "usage": {"prompt_tokens": 10, "completion_tokens": 1, "total_tokens": 11},
    }


class StubServer:
    """Start with `start()` (returns the base URL, ending in /v1); stop with `stop()`."""

    def __init__(self, config: StubConfig | None = None) -> None:
        self.config = config or StubConfig()
        self.stats = StubStats()
        self._rng = random.Random(self.config.seed)
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._runner: web.AppRunner | None = None
        self.port = 0
        self.batches = BatchEndpoints(self)

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        self.stats.requests += 1
        self.stats.auth_headers.add(request.headers.get("Authorization", ""))
        body = await request.json()
        if self.config.record:
            self.stats.bodies.append(body)
        refused = self.refusal(body)
        if refused is not None:
            return web.json_response(refused[1], status=refused[0])
        if self.config.latency_s:
            await asyncio.sleep(self.config.latency_s)
        if self._rng.random() < self.config.fault_rate:
            return await self._fault(request, body)
        return web.json_response(self.completion(body))

    def refusal(self, body: dict) -> tuple[int, dict] | None:
        """(status, error body) for a request the stub refuses, else None."""
        if self.config.reject_all:
            return self.config.reject_all, {"error": {"message": "rejected by the stub"}}
        if "TOO_LONG" in json.dumps(body["messages"]):
            error = {
                "message": "This model's maximum context length is 8 tokens",
                "code": "context_length_exceeded",
            }
            return 400, {"error": error}
        return None

    def completion(self, body: dict) -> dict:
        """The chat completion the stub answers `body` with (live, or as a line of a batch's output)."""
        last = str(body["messages"][-1].get("content"))
        scripted = next((reply for marker, reply in self.config.replies if marker in last), None)
        invalid = self._rng.random() < self.config.invalid_rate
        invalid = invalid or _digest(body)[1] < 256 * self.config.invalid_hash_rate
        answer = _answer(body, self.config.tokens)
        content = scripted if scripted is not None else "I cannot choose." if invalid else answer
        return _completion(body, content, self.config.logprobs, self.config.tokens)

    async def _fault(self, request: web.Request, body: dict) -> web.StreamResponse:
        fault = self._rng.choice(self.config.faults)
        self.stats.faults[fault] += 1
        if fault in ("429", "500"):
            return web.json_response({"error": {"message": f"injected {fault}"}}, status=int(fault))
        if fault == "timeout":
            await asyncio.sleep(self.config.hang_s)
        if fault == "malformed":
            return web.Response(text='{"id": "stub", "choices": [', content_type="application/json")
        if fault == "drop" and request.transport is not None:
            request.transport.abort()
        return web.json_response(_completion(body, ""))

    async def _start(self) -> None:
        app = web.Application(client_max_size=256 * 1024**2)
        app.router.add_post("/v1/chat/completions", self._handle)
        self.batches.add_routes(app)
        self._runner = web.AppRunner(app, access_log=None, shutdown_timeout=0.1)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        self.port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        self._loop.call_later(self.config.lifetime_s, lambda: asyncio.ensure_future(self._stop()))

    async def _stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    def start(self) -> str:
        self._thread.start()
        asyncio.run_coroutine_threadsafe(self._start(), self._loop).result(timeout=10)
        return f"http://127.0.0.1:{self.port}/v1"

    def stop(self) -> None:
        asyncio.run_coroutine_threadsafe(self._stop(), self._loop).result(timeout=10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=10)


def serving(config: StubConfig | None = None) -> Iterator[StubServer]:
    """A started stub, stopped when the generator is closed: `yield from serving(...)` in a pytest fixture."""
    server = StubServer(config)
    server.start()
    try:
        yield server
    finally:
        server.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--latency", type=float, default=0.0)
    parser.add_argument("--fault-rate", type=float, default=0.0)
    parser.add_argument("--lifetime", type=float, default=600.0)
    parser.add_argument("--tokens", default="A,B", help="the answers it gives, comma-separated (e.g. yes,no)")
    args = parser.parse_args()
    server = StubServer(StubConfig(fault_rate=args.fault_rate, latency_s=args.latency, lifetime_s=args.lifetime,
                                   tokens=tuple(args.tokens.split(","))))
    print(server.start(), flush=True)
    server._thread.join(timeout=args.lifetime + 5)


if __name__ == "__main__":
    main()
