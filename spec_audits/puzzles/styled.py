"""Band styles (`style preset released`): skeletons shaped like a released puzzle set, not 1-minimal.

One attempt draws a clue family (the types the puzzle may use) and a clue count, grows a unique clue
set from the family's true clues in a seeded order (types drawn as the band's mix says), prunes it to
1-minimal, pads it with the order's next clues up to the count (shuffled, so the redundant clues are
not all at the end) and keeps it when its mean clue weight lies in the band's score range. Every draw
comes from the item's seeded RNG and nothing depends on time, so a skeleton is the same on any machine.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Mapping, Sequence

from spec_audits.puzzles.clues import Binary, Clue
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
    stating = style.state_identities and "conjunction" in kinds
    if stating:
        order = iter(drawn := list(order))
    core = _stated_identities(drawn, masks, full, target) if stating else _pruned(order, masks, full, target)
    if core is None:
        return None
    extra = max(count, len(core)) - len(core)
    if len(core) + extra > style.clues[1]:
        return None
    try:  # identities stated first, as the released easy puzzles open; otherwise all shuffled
        clues = core + pad([], [c for c in drawn if c not in core], extra, rng) if stating else pad(
            core, order, extra, rng)
    except PuzzleError:  # the family has too few true clues left for this count
        return None
    score = sum(weights[clue.type] for clue in clues) / len(clues)
    low, high = style.score
    return (clues, extra) if low - _EPSILON <= score <= high + _EPSILON else None


def _pruned(order: Iterable[Clue], masks: Mapping[Clue, int], full: int, target: int) -> list[Clue] | None:
    """The order's first unique prefix, pruned to 1-minimal from its end."""
    grown = grow(order, masks, target)
    if grown is None:
        return None
    return prune(grown, range(len(grown) - 1, -1, -1), lambda subset: meet(subset, masks, full) == target)


def _stated_identities(order: list[Clue], masks: Mapping[Clue, int], full: int, target: int) -> list[Clue] | None:
    """One identity-stating conjunction per person, in the people's order, when together they are unique."""
    stated: dict[str, Clue] = {}
    for clue in order:
        if states_identity(clue) and isinstance(clue, Binary):
            stated.setdefault(clue.left.person, clue)
    core = [stated[person] for person in sorted(stated)]
    return core if core and meet(core, masks, full) == target else None


def states_identity(clue: Clue) -> bool:
    """A conjunction of one person's values of two attributes ('A is Asian and non-binary')."""
    return (isinstance(clue, Binary) and clue.type == "conjunction" and clue.left.person == clue.right.person
            and clue.left.attribute != clue.right.attribute)


def one_person_compound(clue: Clue) -> bool:
    """A disjunction, implication or biconditional whose two sides name the same person."""
    return isinstance(clue, Binary) and clue.type != "conjunction" and clue.left.person == clue.right.person


def identity_order(clue: Clue, first: Sequence[str]) -> Clue:
    """A clue about one person with its sides in the style's attribute order (`BandStyle.identity_first`)."""
    if not isinstance(clue, Binary) or clue.left.person != clue.right.person:
        return clue
    rank = {attribute: index for index, attribute in enumerate(first)}
    if rank.get(clue.right.attribute, len(rank)) < rank.get(clue.left.attribute, len(rank)):
        return Binary(clue.type, clue.right, clue.left)
    return clue
