"""Difficulty bands: `easy <= 2, intermediate <= 4, hard > 4`, matched in declared order."""

from __future__ import annotations

import math

from spec_audits.puzzles.model import Band, PuzzleError


def band_of(bands: list[Band], score: float) -> str:
    """The first band whose condition the score meets."""
    for band in bands:
        if (score <= band.bound) if band.op == "<=" else (score > band.bound):
            return band.name
    raise PuzzleError(f"score {score:g} falls in no declared difficulty band")


def band_interval(bands: list[Band], name: str) -> tuple[float, float]:
    """The half-open interval (low, high] of scores that land in band `name`."""
    low = -math.inf
    for band in bands:
        if band.name == name:
            return (low, band.bound) if band.op == "<=" else (band.bound, math.inf)
        low = band.bound
    declared = ", ".join(b.name for b in bands)
    raise PuzzleError(f"unknown difficulty band {name!r}; declared: {declared}")


def check_bands(bands: list[Band]) -> None:
    """Bands must be non-empty, named once, with rising `<=` bounds and at most a final `>`."""
    if not bands:
        raise PuzzleError("no difficulty bands declared")
    names = [b.name for b in bands]
    if len(set(names)) != len(names):
        raise PuzzleError(f"difficulty band declared twice: {names}")
    for previous, band in zip(bands, bands[1:], strict=False):
        if previous.op == ">":
            raise PuzzleError(f"band {previous.name!r} ('> {previous.bound:g}') must be the last band")
        if band.bound < previous.bound or (band.op == "<=" and band.bound == previous.bound):
            raise PuzzleError(
                f"band {band.name!r} bound {band.bound:g} must rise above {previous.name!r} bound {previous.bound:g}"
            )
