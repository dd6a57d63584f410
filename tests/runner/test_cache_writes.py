"""The run's response cache: writes committed in one transaction per tick, keys and stored values unchanged."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from spec_audits.runner.cache_writes import BatchedCache
from spec_audits.runner.services.cache import ResponseCache, call_key

VALUE = {"text": "A", "usage": {"prompt_tokens": 10, "completion_tokens": 1}, "top_logprobs": None}


def _committed(path: Path) -> dict[str, str]:
    """What another process reading the cache file sees."""
    with sqlite3.connect(path) as db:
        return dict(db.execute("SELECT key, value FROM responses").fetchall())


def test_call_keys_are_those_existing_caches_hold() -> None:
    key = call_key("openai/gpt-4o-mini", None, {"temperature": 1.0, "max_tokens": 2, "seed": 3},
                   [{"role": "user", "content": "Pick A or B"}], "0/answer0")
    assert key == "ec9697e493e242c2fe5175d2538063e158cc36157e4c1485e68f1f322a8b0de8"


def test_puts_wait_for_the_tick_but_gets_see_them_at_once(tmp_path: Path) -> None:
    path = tmp_path / "responses.sqlite"
    cache = BatchedCache(path, tick_s=3600)
    cache.put("k1", VALUE)
    cache.put("k2", {**VALUE, "text": "B"})
    assert cache.get("k1") == VALUE and cache.get("k2")["text"] == "B"
    assert _committed(path) == {}
    cache.flush()
    assert set(_committed(path)) == {"k1", "k2"}
    cache.put("k3", VALUE)
    cache.close()
    assert set(_committed(path)) == {"k1", "k2", "k3"}


def test_a_put_past_the_tick_commits_everything_pending(tmp_path: Path) -> None:
    path = tmp_path / "responses.sqlite"
    cache = BatchedCache(path, tick_s=0.0)
    cache.put("k1", VALUE)
    assert set(_committed(path)) == {"k1"}
    cache.close()


def test_entries_of_the_plain_cache_and_the_batched_one_are_interchangeable(tmp_path: Path) -> None:
    path = tmp_path / "responses.sqlite"
    old = ResponseCache(path)
    old.put("old", VALUE)
    old.close()
    batched = BatchedCache(path, tick_s=3600)
    batched.put("new", VALUE)
    assert batched.get("old") == VALUE
    batched.close()
    reread = ResponseCache(path)
    assert reread.get("new") == VALUE and _committed(path)["new"] == _committed(path)["old"]
    reread.close()
