"""The response cache: sqlite, shared across runs, keyed by everything that determines a call's answer."""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import click

from spec_audits.base.user_cache import cache_dir
from spec_audits.contract.seeding import canonical_json as canonical

RESPONSE_CACHE_ENV = "SPEC_RESPONSE_CACHE"
_INSERT = "INSERT OR REPLACE INTO responses VALUES (?, ?)"
RESPONSE_KEYS = frozenset({"text", "usage", "top_logprobs"})  # what spec_audits.runner.call stores and reads back
MMAP_BYTES = 256 * 1024**2  # of the cache file mapped for reads (address space; the OS pages it in and out)


def default_cache_path() -> Path:
    return Path(os.environ.get(RESPONSE_CACHE_ENV) or cache_dir() / "responses.sqlite")


def call_key(model: str, api_base: str | None, params: dict[str, Any], messages: list[dict[str, Any]],
             slot: str) -> str:
    """The identity of one call. `slot` names the sample (and re-ask / turn) it belongs to, so that
    independent samples of the same prompt are cached separately."""
    body = {"model": model, "api_base": api_base, "params": params, "messages": messages, "slot": slot}
    return hashlib.sha256(canonical(body).encode()).hexdigest()


class CacheError(click.ClickException):
    """The response cache file cannot be opened, read or written (damaged, not a cache, full disk,
    read-only): exit status 1, naming the file and the ways round it. Results already written are kept."""

    def __init__(self, path: Path, problem: str) -> None:
        self.path = path
        super().__init__(f"{path}: the response cache cannot be used ({problem}); run again with --no-cache, "
                         "or move the file aside (a new cache is then started)")


class ResponseCache:
    """key -> JSON response. Only successful responses are stored."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        with self._guarded():
            self._db = sqlite3.connect(path, timeout=30, isolation_level=None)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.execute(f"PRAGMA mmap_size={MMAP_BYTES}")  # a hit reads mapped pages: no read() per page
            self._db.execute("CREATE TABLE IF NOT EXISTS responses (key TEXT PRIMARY KEY, value TEXT NOT NULL)")

    @contextmanager
    def _guarded(self) -> Iterator[None]:
        """sqlite's errors, and an entry that is not a JSON object, as a CacheError naming the file."""
        try:
            yield
        except sqlite3.Error as err:
            raise CacheError(self.path, str(err)) from None
        except (ValueError, TypeError) as err:  # json.JSONDecodeError is a ValueError
            raise CacheError(self.path, f"an entry is not a stored response: {err}") from None

    def get(self, key: str) -> dict[str, Any] | None:
        with self._guarded():
            found = self._db.execute("SELECT value FROM responses WHERE key = ?", (key,)).fetchone()
            value = json.loads(found[0]) if found else None
            if value is not None and not (isinstance(value, dict) and value.keys() >= RESPONSE_KEYS):
                raise TypeError(f"{str(value)[:80]!r} is not an object with {', '.join(sorted(RESPONSE_KEYS))}")
            return value

    def put(self, key: str, value: dict[str, Any]) -> None:
        with self._guarded():
            self._db.execute(_INSERT, (key, json.dumps(value)))

    def put_many(self, entries: Iterable[tuple[str, dict[str, Any]]]) -> None:
        """Store many responses in one transaction: one commit (a WAL append) instead of one per response."""
        rows = [(key, json.dumps(value)) for key, value in entries]
        with self._guarded():
            self._db.execute("BEGIN")
            try:
                self._db.executemany(_INSERT, rows)
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")

    def close(self) -> None:
        with self._guarded():
            self._db.close()


class NoCache:
    """Stands in for ResponseCache under --no-cache."""

    def get(self, key: str) -> dict[str, Any] | None:
        return None

    def put(self, key: str, value: dict[str, Any]) -> None:
        return None

    def close(self) -> None:
        return None
