"""Shared generated turns (Message.share): one reply per (share key, sample) in a run, cache or not.

The first row to reach a shared turn makes the call; the rows that share it wait for that reply (a
failure fails them all). A resumed run starts from the turns its written answers saw.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Hashable, Iterable
from dataclasses import replace

from spec_audits.contract.results_model import ResultRow
from spec_audits.contract.suite_model import SuiteRow
from spec_audits.runner.call import Reply

Key = tuple[str, int]


class SharedTurns:
    def __init__(self) -> None:
        self._replies: dict[Key, asyncio.Future[Reply]] = {}
        self._makers: dict[Key, Hashable] = {}

    def seed(self, made: dict[Key, str | None], journal: dict[Key, str | None] | None = None) -> None:
        """Keep the shared turns of answers already written (`written_turns`) and of the run's turn journal, so
        the rows still to come get the same text."""
        made = {**made, **(journal or {})}
        loop = asyncio.get_running_loop()
        for key, text in made.items():
            if key not in self._replies:
                future: asyncio.Future[Reply] = loop.create_future()
                future.set_result(Reply(text, {}, None, True, 0.0))
                self._replies[key] = future

    def forget(self, error: type[BaseException]) -> None:
        """Drop the turns whose call raised `error`, so that the next row to reach them asks again."""
        self._replies = {key: future for key, future in self._replies.items()
                         if not (future.done() and not future.cancelled() and isinstance(future.exception(), error))}

    async def get(self, key: Key, call: Callable[[], Awaitable[Reply]], maker: Hashable = None) -> Reply:
        """The turn's reply: `call`'s for the first row to ask (`maker`, which gets it again if it asks again,
        as a batch pass's row does), the same text at no cost for the others."""
        if key in self._replies:
            reply = await asyncio.shield(self._replies[key])
            if maker is not None and self._makers.get(key) == maker:
                return reply
            return replace(reply, usage={}, latency_s=0.0, cached=True)  # nothing new was paid for
        future: asyncio.Future[Reply] = asyncio.get_running_loop().create_future()
        self._replies[key] = future
        self._makers[key] = maker
        try:
            future.set_result(await call())
        except BaseException as err:
            future.set_exception(err)
            future.exception()  # marks it retrieved when no other row waits on it
            raise
        return future.result()


def written_turns(done: Iterable[tuple[int, ResultRow]],
                  row_of: Callable[[str], SuiteRow | None]) -> dict[Key, str | None]:
    """The shared turns (share key, sample) the answers in `done` (results.jsonl, streamed) saw."""
    made: dict[Key, str | None] = {}
    for _, result in done:
        row = row_of(result.item_id) if result.error is None and result.turns else None
        if row is None:
            continue
        for turn in result.turns or []:
            share = row.messages[turn["turn"]].share
            if share is not None:
                made.setdefault((share, result.sample), turn["content"])
    return made
