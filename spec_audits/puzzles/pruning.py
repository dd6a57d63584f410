"""Clue-set search shared by both families: a seeded order, grow to a unique prefix, prune.

Every decision depends only on yes/no answers of a monotone oracle ("does this clue set pin the
solution?"), so any sound and complete oracle yields the same puzzle for the same seed.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from itertools import islice
from typing import TypeVar

from spec_audits.puzzles.model import PuzzleError

T = TypeVar("T")
K = TypeVar("K", bound=str)  # a clue type, by name


def type_balanced_order(
    rng: random.Random, pools: Mapping[K, Sequence[T]], affinity: Mapping[K, float]
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


def grow(order: Iterable[T], masks: Mapping[T, int], target: int) -> list[T] | None:
    """Add clues in order, skipping any that rules out nothing new, until only the target is left."""
    chosen: list[T] = []
    models = -1
    for clue in order:
        narrowed = models & masks[clue]
        if narrowed != models:
            chosen.append(clue)
            models = narrowed
            if models == target:
                return chosen
    return None


def pad(clues: list[T], order: Iterable[T], extra: int, rng: random.Random) -> list[T]:
    """`extra` more clues from the rest of the seeded order, then the whole list shuffled: redundant
    clues at the end would tell the reader they can be skipped."""
    if not extra:
        return clues
    added = list(islice((clue for clue in order if clue not in clues), extra))
    if len(added) < extra:
        raise PuzzleError(f"only {len(added)} more clues exist for redundancy {extra}")
    return rng.sample(clues + added, len(clues) + len(added))


def meet(clues: list[T], masks: Mapping[T, int], full: int) -> int:
    """The assignments (a bitmask) every clue allows."""
    models = full
    for clue in clues:
        models &= masks[clue]
    return models
