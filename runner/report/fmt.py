"""Number formatting as in the paper: percentage points and percentages with one decimal."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any


def pp(value: float | None) -> str:
    """A shift already in percentage points: 15.0 p."""
    return "n/a" if value is None else f"{value:.1f} p"


def pct(value: float | None) -> str:
    """A fraction as a percentage: 0.444 -> 44.4%."""
    return "n/a" if value is None else f"{100 * value:.1f}%"


def num(value: float | None, digits: int = 2) -> str:
    return "n/a" if value is None else f"{value:.{digits}f}"


def pp_ci(ci: Sequence[float | None] | None) -> str:
    return "" if not ci or ci[0] is None or ci[1] is None else f"[{ci[0]:.1f}, {ci[1]:.1f}]"


def pct_ci(ci: Sequence[float | None] | None) -> str:
    return "" if not ci or ci[0] is None or ci[1] is None else f"[{100 * ci[0]:.1f}, {100 * ci[1]:.1f}]"


def rate(r: Mapping[str, Any]) -> str:
    """A summary rate {k, n, rate, ci} as '44.4% (60/135) [36.3, 52.9]'."""
    return f"{pct(r['rate'])} ({r['k']}/{r['n']}) {pct_ci(r['ci'])}".strip()
