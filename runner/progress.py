"""Progress of a run: a tqdm bar on a terminal, a plain line every tenth of the way in a log, both with an ETA."""

from __future__ import annotations

import sys
import time
from typing import Any, TextIO

_STEPS = 10
_NOTE_EVERY_S = 10.0  # a retry reason that does not change is printed again at most this often


class LineProgress:
    """What tqdm's bar shows, as at most `_STEPS` + 1 whole lines: no carriage-return frames in a log."""

    def __init__(self, total: int, initial: int, unit: str, file: TextIO) -> None:
        self.total, self.done, self.unit, self.file = total, initial, unit, file
        self.initial = initial
        self.started = time.monotonic()
        self.postfix: dict[str, Any] = {}
        self.note, self.noted = "", 0.0
        self.printed = -1 if initial < total else _STEPS

    def set_postfix(self, refresh: bool = False, **values: Any) -> None:
        self.postfix = values

    def set_description_str(self, text: str, refresh: bool = True) -> None:
        """A note such as the reason of the latest retry: its own line when new, or again every 10 s."""
        now = time.monotonic()
        if text and (text != self.note or now - self.noted >= _NOTE_EVERY_S):
            self.noted = now
            print(f"{self.done}/{self.total} {self.unit}, {now - self.started:.0f} s: {text}", file=self.file,
                  flush=True)
        self.note = text

    def update(self, n: int = 1) -> None:
        self.done += n
        step = self.done * _STEPS // self.total if self.total else _STEPS
        if step > self.printed:
            self.printed = step
            self._line()

    def _line(self) -> None:
        extra = "".join(f", {key} {value}" for key, value in self.postfix.items())
        elapsed = time.monotonic() - self.started
        print(f"{self.done}/{self.total} {self.unit} ({100 * self.done // max(self.total, 1)}%), "
              f"{elapsed:.0f} s{eta(elapsed, self.done - self.initial, self.total - self.done)}{extra}",
              file=self.file, flush=True)

    def close(self) -> None:
        if self.printed < _STEPS and self.done:
            self._line()


def eta(elapsed: float, done: int, left: int) -> str:
    """", ETA ..." at the rate so far (`done` answers in `elapsed` seconds), or "" before the first or after the
    last answer."""
    if done <= 0 or left <= 0:
        return ""
    seconds = elapsed / done * left
    shown = f"{seconds:.0f} s" if seconds < 120 else f"{seconds / 60:.0f} min" if seconds < 7200 else \
        f"{seconds / 3600:.1f} h"
    return f", ETA {shown}"


def progress(total: int, initial: int, enabled: bool, unit: str = "answers", file: TextIO | None = None) -> Any:
    """A tqdm bar when `file` (stderr) is a terminal, LineProgress otherwise, a silent bar when disabled."""
    from tqdm import tqdm

    file = file or sys.stderr
    if enabled and not file.isatty():
        return LineProgress(total, initial, unit, file)
    return tqdm(total=total, initial=initial, unit=unit, disable=not enabled, dynamic_ncols=True, file=file,
                smoothing=0.1)
