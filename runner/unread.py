"""Answers a scorer can read, and the replies that gave none (docs/running.md, "Exit status"): a run whose
every reply is unreadable is not a success, and `spec score` of such runs has nothing to score.

A reply is scorable when its call succeeded and it gave an answer: a parsed token, a logprob distribution,
a puzzle cell, or an answered turn of a conversation. An abstention (no valid answer in the reply) is kept
in results.jsonl and counted, but scores nothing.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from spec_audits.base.safe_files import iter_lines_capped, open_regular, present
from spec_audits.base.terminal import visible
from spec_audits.contract.results_model import ResultRow

SHOWN = 60  # characters of the most common reply that a message quotes


def scorable(row: ResultRow) -> bool:
    """True when the row's call succeeded and it holds an answer a scorer reads."""
    return _answered(row.error, row.answer, row.logprobs, row.solution, row.turn_answers)


def _answered(error: Any, answer: Any, logprobs: Any, solution: Any, turns: Any) -> bool:
    return error is None and (answer is not None or bool(logprobs) or bool(solution)
                              or any(t.get("answer") is not None for t in (turns or {}).values()))


def has_scorable(results: Path, replies: bool = False) -> bool:
    """Whether a results.jsonl holds one scorable row (with `replies`, one successful non-empty reply); stops at
    the first (a torn last line is skipped)."""
    if not present(results):
        return False
    with open_regular(results) as handle:  # a stranger's run folder: no link followed, lines capped
        for line in iter_lines_capped(handle, results):
            try:
                row = json.loads(line)
                if replies and row.get("error") is None and (row.get("response") or "").strip():
                    return True
                if _answered(*(row.get(name) for name in ("error", "answer", "logprobs", "solution", "turn_answers"))):
                    return True
            except (ValueError, AttributeError):
                continue
    return False


@dataclass(frozen=True)
class Unread:
    """The successful replies that gave no answer: how many, and the most common of them."""

    count: int
    reply: str | None = None
    times: int = 0

    def describe(self) -> str:
        if not self.count:
            return "no unreadable reply"
        shown = "" if self.reply is None else visible(self.reply[:SHOWN] + ("…" if len(self.reply) > SHOWN else ""))
        return f"{self.count} repl{'y' if self.count == 1 else 'ies'} gave no valid answer (the most common, " \
               f"{self.times} times: {json.dumps(shown, ensure_ascii=False)})"


def unread(rows: Iterable[ResultRow]) -> Unread:
    """Count the successful rows that are not scorable, and find their most common reply."""
    replies = Counter((row.response or "").strip() for row in rows if row.error is None and not scorable(row))
    if not replies:
        return Unread(0)
    reply, times = replies.most_common(1)[0]
    return Unread(sum(replies.values()), reply, times)
