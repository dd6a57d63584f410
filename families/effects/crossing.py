"""Which combinations of levels a design asks: the full factorial, or a seeded balanced fraction, with its
balance proved by counting.

A balanced fraction (an orthogonal array of strength 2) holds every level of a factor equally often and
every pair of levels of two factors equally often. It is built over the prime field GF(p) when every
factor has the same prime number p of levels: the runs are the p^t vectors x of GF(p)^t and a factor's
level is a.x for its own direction a, the directions pairwise independent, so each level shows p^(t-1)
times and each pair of levels p^(t-2) times. The seed picks the directions and relabels each factor's
levels; neither changes the counts, which `prove` checks anyway.
"""

from __future__ import annotations

import itertools
import random
from collections import Counter
from typing import Any

Run = tuple[int, ...]  # one combination: the level index of each factor, in the design's factor order


class CrossingError(ValueError):
    """A fraction the factors do not allow; the message says what would."""


def full(sizes: tuple[int, ...]) -> list[Run]:
    return list(itertools.product(*(range(size) for size in sizes)))


def full_size(sizes: tuple[int, ...]) -> int:
    total = 1
    for size in sizes:
        total *= size
    return total


def _is_prime(value: int) -> bool:
    return value >= 2 and all(value % d for d in range(2, int(value**0.5) + 1))


def fraction_sizes(sizes: tuple[int, ...]) -> list[int]:
    """The run counts a balanced fraction of these factors may have (fewer than the full cross), or []."""
    p = sizes[0]
    if len(set(sizes)) != 1 or not _is_prime(p) or len(sizes) < 3:
        return []
    counts, t = [], 2
    while p**t < full_size(sizes):
        if (p**t - 1) // (p - 1) >= len(sizes):
            counts.append(p**t)
        t += 1
    return counts


def fraction(sizes: tuple[int, ...], runs: int, seed: int) -> list[Run]:
    """`runs` combinations, each level and each pair of levels equally often; CrossingError when impossible."""
    allowed = fraction_sizes(sizes)
    if runs not in allowed:
        shape = " x ".join(map(str, sizes))
        offer = ("; it can have " + ", ".join(map(str, allowed)) + " runs") if allowed else (
            ": a fraction is built when three or more factors all have the same prime number of levels")
        raise CrossingError(f"no balanced fraction of {runs} runs for factors of {shape} levels{offer}")
    p = sizes[0]
    t = _power(runs, p)
    rng = random.Random(f"fraction:{seed}")
    directions = _directions(p, t)
    rng.shuffle(directions)
    chosen = directions[: len(sizes)]
    labels = [rng.sample(range(p), p) for _ in sizes]
    return sorted(tuple(labels[f][sum(a * b for a, b in zip(d, x, strict=True)) % p] for f, d in enumerate(chosen))
                  for x in itertools.product(range(p), repeat=t))


def _power(runs: int, p: int) -> int:
    t = 0
    while p**t < runs:
        t += 1
    return t


def _directions(p: int, t: int) -> list[tuple[int, ...]]:
    """One vector of each line through the origin of GF(p)^t (its first nonzero entry is 1): pairwise independent."""
    vectors = itertools.product(range(p), repeat=t)
    return [v for v in vectors if any(v) and next(a for a in v if a) == 1]


def prove(runs: list[Run], sizes: tuple[int, ...], names: tuple[str, ...]) -> dict[str, Any]:
    """The balance of `runs`, counted: within each factor every level equally often, and within each pair of
    factors every pair of levels equally often. Returns the record manifest.json keeps (times per level of
    each factor, times per pair of levels of each pair of factors); raises CrossingError when it does not hold."""
    per_level: dict[str, int] = {}
    for f, size in enumerate(sizes):
        counts = Counter(run[f] for run in runs)
        per_level[names[f]] = _uniform([counts.get(level, 0) for level in range(size)], names[f])
    per_pair: dict[str, int] = {}
    for f, g in itertools.combinations(range(len(sizes)), 2):
        pairs = Counter((run[f], run[g]) for run in runs)
        label = f"{names[f]} x {names[g]}"
        found = [pairs.get(pair, 0) for pair in itertools.product(range(sizes[f]), range(sizes[g]))]
        per_pair[label] = _uniform(found, label)
    return {"factors": list(names), "levels": list(sizes), "runs": len(runs), "per_level": per_level,
            "per_pair": per_pair}


def _uniform(counts: list[int], what: str) -> int:
    if min(counts) != max(counts) or not counts[0]:
        raise CrossingError(f"the combinations are not balanced over {what}: between {min(counts)} and "
                            f"{max(counts)} times")
    return counts[0]
