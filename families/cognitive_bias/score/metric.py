"""Eq. 1 of the paper, per arm pair, and the per-row effects (Eqs. 2-4).

m = k * (|a1 - y1| - |a2 - y2|) / max(|a1 - y1|, |a2 - y2|) in [-1, 1], with a the 0-based original option
index (reversal already undone by the suite's `answers`), y = (x_1, x_2), a2 flipped to n - 1 - a2 when
`flip_treatment`, and 0/0 = 0. An abstention (no valid answer) gives NaN, never 0.
"""

from __future__ import annotations

import math
from typing import Any


def bias_metric(a1: float, a2: float, metric: dict[str, Any]) -> float:
    if math.isnan(a1) or math.isnan(a2):
        return math.nan
    if metric["flip_treatment"]:
        a2 = metric["n_options"] - 1 - a2
    d1, d2 = abs(a1 - metric["x_1"]), abs(a2 - metric["x_2"])
    top = max(d1, d2)
    return 0.0 if top == 0 else metric["k"] * (d1 - d2) / top


def effects(m_zero: float, m_neutral: float, m_biased: float) -> dict[str, float]:
    """The six scalars of a bank row: |m| per condition, presence, content and total effects."""
    zero, neutral, biased = abs(m_zero), abs(m_neutral), abs(m_biased)
    return {"abs_zero_shot": zero, "abs_neutral_turn": neutral, "abs_biased_turn": biased,
            "presence": neutral - zero, "content": biased - neutral, "total": biased - zero}
