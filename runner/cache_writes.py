"""The response cache as a run uses it: writes held in memory and committed in one transaction per tick.

A commit per response blocks the event loop, and every call in flight with it, on a WAL write: the
runner's largest own cost per call when many calls are answered at once. A kill loses at most the last
tick's entries, whose answers results.jsonl already holds (a row is appended after its calls returned),
so a resume never needs them; only a new run elsewhere would call those few again."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from spec_audits.runner.services.cache import ResponseCache

FLUSH_TICK_S = 0.25


class BatchedCache(ResponseCache):
    """A ResponseCache whose puts are committed together at most every `tick_s`, and at `flush`/`close`.
    A get sees the pending puts, so a call repeated within a tick is a hit as before."""

    def __init__(self, path: Path, tick_s: float = FLUSH_TICK_S) -> None:
        super().__init__(path)
        self._tick_s = tick_s
        self._pending: dict[str, dict[str, Any]] = {}
        self._due = time.monotonic() + tick_s

    def get(self, key: str) -> dict[str, Any] | None:
        pending = self._pending.get(key)
        return pending if pending is not None else super().get(key)

    def put(self, key: str, value: dict[str, Any]) -> None:
        self._pending[key] = value
        if time.monotonic() >= self._due:
            self.flush()

    def flush(self) -> None:
        if self._pending:
            self.put_many(self._pending.items())
            self._pending.clear()
        self._due = time.monotonic() + self._tick_s

    def close(self) -> None:
        try:
            self.flush()
        finally:
            super().close()
