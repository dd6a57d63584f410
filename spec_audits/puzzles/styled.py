"""Band styles (`style preset released`): skeletons shaped like a released puzzle set, not 1-minimal.

One attempt draws a clue family (the types the puzzle may use) and a clue count, grows a unique clue
set from the family's true clues in a seeded order (types drawn as the band's mix says), prunes it to
1-minimal, pads it with the order's next clues up to the count (shuffled, so the redundant clues are
not all at the end) and keeps it when its mean clue weight lies in the band's score range. Every draw
comes from the item's seeded RNG and nothing depends on time, so a skeleton is the same on any machine.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence

from spec_audits.puzzles.clues import Clue
from spec_audits.puzzles.model import BandStyle, ClueFamily, PuzzleError
from spec_audits.puzzles.pruning import grow, meet, pad, prune, type_balanced_order

_EPSILON = 1e-9  # score ranges are inclusive; means are ratios of small integers


def draw_family(style: BandStyle, rng: random.Random) -> ClueFamily:
    return rng.choices(style.families, weights=[f.weight for f in style.families])[0]


def draw_count(style: BandStyle, rng: random.Random) -> int:
    """low + Binomial(high - low, p), p chosen so the count is `mean_clues` on average."""
    low, high = style.clues
    p = (style.mean_clues - low) / (high - low) if high > low else 0.0
    return low + sum(rng.random() < p for _ in range(high - low))


def styled_attempt(style: BandStyle, rng: random.Random, pools: Mapping[str, Sequence[Clue]],
                   masks: Mapping[Clue, int], full: int, target: int,
                   weights: Mapping[str, float]) -> tuple[list[Clue], int] | None:
    """(clues, redundant clues added) in the style, or None when this draw gives no such puzzle."""
    family = draw_family(style, rng)
    count = draw_count(style, rng)
    kinds = {kind: pools[kind] for kind in family.types if pools.get(kind)}
    order = type_balanced_order(rng, kinds, {kind: style.mix.get(kind, 1.0) for kind in kinds})
    grown = grow(order, masks, target)
    if grown is None:
        return None
    core = prune(grown, range(len(grown) - 1, -1, -1), lambda subset: meet(subset, masks, full) == target)
    extra = max(count, len(core)) - len(core)
    if len(core) + extra > style.clues[1]:
        return None
    try:
        clues = pad(core, order, extra, rng)
    except PuzzleError:  # the family has too few true clues left for this count
        return None
    score = sum(weights[clue.type] for clue in clues) / len(clues)
    low, high = style.score
    return (clues, extra) if low - _EPSILON <= score <= high + _EPSILON else None
