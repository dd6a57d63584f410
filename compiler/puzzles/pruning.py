"""Clue-set search shared by both families: a seeded order, grow to a unique prefix, prune.

Every decision depends only on yes/no answers of a monotone oracle ("does this clue set pin the
solution?"), so any sound and complete oracle yields the same puzzle for the same seed.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import TypeVar

T = TypeVar("T")


def type_balanced_order(
    rng: random.Random, pools: Mapping[str, Sequence[T]], affinity: Mapping[str, float]
) -> Iterator[T]:
    """All candidates, lazily; each next one drawn from a clue type chosen with probability ~ its
    affinity, then uniformly within the type.

    Choosing the type first keeps large families (hundreds of disjunctions) from drowning small ones
    (a handful of count clues).
    """
    remaining = {kind: list(pool) for kind, pool in sorted(pools.items()) if pool}
    while remaining:
        kinds = list(remaining)
        kind = rng.choices(kinds, weights=[affinity[k] for k in kinds])[0]
        pool = remaining[kind]
        index = rng.randrange(len(pool))
        pool[index], pool[-1] = pool[-1], pool[index]
        yield pool.pop()
        if not pool:
            del remaining[kind]


def first_accepted_prefix(size: int, accepts: Callable[[int], bool]) -> int | None:
    """The smallest n <= size with accepts(n), for monotone `accepts`; galloping then bisection."""
    high = 1
    while high < size and not accepts(high):
        high *= 2
    high = min(high, size)
    if not accepts(high):
        return None
    low = high // 2  # accepts(low) is False (or low == 0)
    while high - low > 1:
        middle = (low + high) // 2
        if accepts(middle):
            high = middle
        else:
            low = middle
    return high


def prune(clues: list[T], removal_order: Sequence[int], accepts: Callable[[list[T]], bool]) -> list[T]:
    """One greedy pass: drop each clue (in `removal_order`, indices into `clues`) whose removal keeps
    `accepts`. The result is 1-minimal for a monotone `accepts`."""
    keep = [True] * len(clues)
    for index in removal_order:
        keep[index] = False
        if not accepts([c for c, k in zip(clues, keep, strict=True) if k]):
            keep[index] = True
    return [c for c, k in zip(clues, keep, strict=True) if k]
