"""The analysis settings of the influence statistics (influence.py, summary.py, pipeline.py).

Their own module: summary.py needs the type and influence.py imports summary.py (through position.py),
so while they lived in influence.py those score modules imported each other in a circle.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

AsymVariance = Literal["2v0", "4v0"]


@dataclass(frozen=True)
class Options:
    """Analysis settings; defaults follow the paper (α = .05, pooled z, 2V0 Wald, ε = .01, B = 5000)."""

    alpha: float = 0.05
    asym_variance: AsymVariance = "2v0"
    pooled_z: bool = True
    epsilon: float = 0.01
    margin: float = 0.05
    wilson_band: tuple[float, float] = (0.45, 0.55)
    bootstrap: int = 5000
    seed: int = 0
