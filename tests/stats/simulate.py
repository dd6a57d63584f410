"""Synthetic answers for the power and paired-comparison simulations: arms of answers clustered by scenario.

Each answer is y = mean of its arm + u (the scenario's effect on that arm, shared by the scenario's answers,
variance icc * unit_var) + e (the answer's own noise, variance (1 - icc) * unit_var): exactly the model
spec_audits.stats.power plans with, so the planned power is what the simulation should find.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Arms:
    """One simulated run: answers y, which arm each is in, and its scenario code."""

    y: np.ndarray
    at_level: np.ndarray
    clusters: np.ndarray


def layout(groups: int, per_arm: int) -> tuple[np.ndarray, np.ndarray]:
    """Scenario code and arm (True: the level) of each answer: per scenario, per_arm answers in each arm."""
    clusters = np.repeat(np.arange(groups), 2 * per_arm)
    at_level = np.tile(np.repeat([True, False], per_arm), groups)
    return clusters, at_level


def draw(rng: np.random.Generator, runs: int, groups: int, per_arm: int, effect: float, icc: float,
         shared: np.ndarray | None = None) -> np.ndarray:
    """`runs` simulated answer vectors (runs x answers) with the level's mean `effect` above the reference's.
    `shared` adds scenario effects common to several draws (runs x groups x 2), e.g. to two models."""
    u = rng.normal(0, np.sqrt(icc), (runs, groups, 2)) if shared is None else shared
    e = rng.normal(0, np.sqrt(1 - icc), (runs, groups, 2, per_arm))
    y = np.array([effect, 0.0])[None, None, :, None] + u[..., None] + e
    return y.reshape(runs, -1)
