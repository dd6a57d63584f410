"""The run folder's turn journal (turns.jsonl): every generated turn before a row's answer, written as it
arrives, so that a killed run resumes a conversation at the turn it reached and never pays for a turn
twice, with or without the response cache.

One JSON object a line: item_id, sample, turn (the message's index), share (its share key or null) and
content. A kill leaves at most one torn last line, which is ignored; a line that is no entry is an error
naming the file and line, since the journal is the run's own file and a damaged one must not be guessed.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from spec_audits.base.safe_files import open_append, present, read_text_capped
from spec_audits.runner.files_out import write_text
from spec_audits.runner.run_config import RunError

JOURNAL_FILE = "turns.jsonl"
TurnKey = tuple[str, int, int]  # (item_id, sample, turn)
_FIELDS: dict[str, type | tuple[type, ...]] = {"item_id": str, "sample": int, "turn": int, "share": (str, type(None)),
                                               "content": (str, type(None))}


def _entry(line: str, path: Path, number: int) -> dict[str, Any]:
    try:
        entry = json.loads(line)
    except ValueError:
        entry = None
    if not isinstance(entry, dict) or set(entry) != set(_FIELDS) or \
            not all(isinstance(entry[key], kind) for key, kind in _FIELDS.items()):
        raise RunError(f"{path}:{number}: not a turn of this run's journal; move {JOURNAL_FILE} aside to make "
                       "its turns again")
    return entry


class TurnJournal:
    """The turns a run has made (read on resume) and the writer of new ones."""

    def __init__(self, run_dir: Path) -> None:
        self.path = run_dir / JOURNAL_FILE
        self.turns: dict[TurnKey, str | None] = {}
        self._entries: list[dict[str, Any]] = []
        self.shared: dict[tuple[str, int], str | None] = {}
        if present(self.path):
            lines = read_text_capped(self.path).split("\n")
            torn = lines.pop() if lines else ""  # what follows the last newline: empty, or a torn line
            for number, line in enumerate(lines, 1):
                self._keep(_entry(line, self.path, number))
            if torn:
                self._rewrite()
        self._fd: int | None = None
        self._written: set[TurnKey] = set()

    def _keep(self, entry: dict[str, Any]) -> None:
        self._entries.append(entry)
        self.turns[(entry["item_id"], entry["sample"], entry["turn"])] = entry["content"]
        if entry["share"] is not None:
            self.shared.setdefault((entry["share"], entry["sample"]), entry["content"])

    def _rewrite(self) -> None:
        body = "".join(json.dumps(entry) + "\n" for entry in self._entries)
        write_text(self.path, body)  # replaced whole, never through a link

    def get(self, key: TurnKey) -> tuple[bool, str | None]:
        """(found, content) of a turn an earlier run made (this run's own turns are its cache's and shared
        turns' to give: a batch pass asks for them again and must see what it was answered)."""
        return (key in self.turns, self.turns.get(key))

    def add(self, key: TurnKey, share: str | None, content: str | None) -> None:
        """Record a turn, in one write (a kill tears at most this line)."""
        if key in self.turns or key in self._written:
            return
        self._written.add(key)
        entry = {"item_id": key[0], "sample": key[1], "turn": key[2], "share": share, "content": content}
        self._entries.append(entry)
        if self._fd is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._fd = open_append(self.path)
        line = json.dumps(entry).encode() + b"\n"
        while line:
            line = line[os.write(self._fd, line):]

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
