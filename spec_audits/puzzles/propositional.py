"""The seed-003 family: people x attributes with a few values each, propositional clues.

Generation works on an abstract skeleton (values are shape symbols G1, G2, R1, ...), so one skeleton
serves several demographic combinations. The oracle is exact: every clue is a bitmask over all
assignments of the declared domain, and a clue set is unique when the AND of its masks has one bit.
"""

from __future__ import annotations

import math
import random
from functools import lru_cache
from itertools import combinations, permutations, product
from typing import Any

from spec_audits.base.records import Record
from spec_audits.contract.seeding import Coords, item_rng
from spec_audits.puzzles.bands import band_interval, band_of
from spec_audits.puzzles.clues import Binary, Clue, Count, Lit, Same, Unary, relabel, to_json
from spec_audits.puzzles.model import PropositionalConfig, PuzzleError
from spec_audits.puzzles.pruning import grow, meet, pad, prune, type_balanced_order
from spec_audits.puzzles.render import PROPOSITIONAL_PHRASINGS, Renderer, propositional_domain
from spec_audits.puzzles.solve import certify
from spec_audits.puzzles.styled import identity_order, one_person_compound, styled_attempt
from spec_audits.puzzles.validate import parse_cell, validate_config

Selection = dict[str, list[str]]  # attribute -> its picked values, in symbol order (G1, G2, ...)


class Skeleton(Record):
    """A unique clue set over shape symbols, before values are filled in."""

    clues: tuple[Clue, ...]
    solution: dict[str, dict[str, str]]  # person -> attribute -> symbol
    band: str
    score: float
    redundant: int = 0  # clues added on purpose after pruning
    protect: tuple[str, ...] | None = None  # people no single clue identifies; None: the config's
    count_digits: bool = False  # counts written "Exactly 2 people", not "Exactly two people"


class MaskDomain:
    """All assignments of the declared domain, indexed in mixed radix; clues become bitmasks."""

    def __init__(self, people: list[str], bases: dict[str, int]) -> None:
        self.people = people
        self.bases = bases
        digits = [(p, a) for p in people for a in bases]
        self.size = math.prod(bases[a] for _, a in digits)
        self.full = (1 << self.size) - 1
        self._stride: dict[tuple[str, str], int] = {}
        stride = 1
        for digit in reversed(digits):
            self._stride[digit] = stride
            stride *= bases[digit[1]]

    def index(self, assignment: dict[str, dict[str, int]]) -> int:
        return sum(self._stride[(p, a)] * s for p, row in assignment.items() for a, s in row.items())

    def lit(self, person: str, attribute: str, symbol: int) -> int:
        """Assignments where person's attribute has symbol index `symbol`: a repeated block pattern."""
        stride, base = self._stride[(person, attribute)], self.bases[attribute]
        period = stride * base
        block = ((1 << stride) - 1) << (symbol * stride)
        return block * (((1 << self.size) - 1) // ((1 << period) - 1))

    def clue(self, clue: Clue) -> int:
        if isinstance(clue, Unary):
            mask = self._lit(clue.lit)
            return mask if clue.type == "direct" else self.full & ~mask
        if isinstance(clue, Binary):
            x, y = self._lit(clue.left), self._lit(clue.right)
            masks = {"conjunction": x & y, "disjunction": x | y, "implication": (self.full & ~x) | y}
            return masks.get(clue.type, self.full & ~(x ^ y))
        if isinstance(clue, Same):
            p, q = clue.people
            base = self.bases[clue.attribute]
            return _or(self.lit(p, clue.attribute, s) & self.lit(q, clue.attribute, s) for s in range(base))
        assert isinstance(clue, Count)
        return self._exactly(clue.attribute, symbol_index(clue.value), clue.n)

    def _lit(self, lit: Lit) -> int:
        return self.lit(lit.person, lit.attribute, symbol_index(lit.value))

    def _exactly(self, attribute: str, symbol: int, n: int) -> int:
        counts = [self.full]  # counts[j]: assignments where exactly j people seen so far have the symbol
        for person in self.people:
            has = self.lit(person, attribute, symbol)
            counts = [
                (counts[j] & ~has if j < len(counts) else 0) | (counts[j - 1] & has if j else 0)
                for j in range(len(counts) + 1)
            ]
        return counts[n] if n < len(counts) else 0


def _or(masks: Any) -> int:
    result = 0
    for mask in masks:
        result |= mask
    return result


def symbol_index(symbol: str) -> int:
    """'G2' -> 1."""
    return int(symbol[len(symbol.rstrip("0123456789")) :]) - 1


@lru_cache(maxsize=64)
def _mask_domain(people: tuple[str, ...], bases: tuple[tuple[str, int], ...]) -> MaskDomain:
    return MaskDomain(list(people), dict(bases))


def mask_domain(config: PropositionalConfig) -> MaskDomain:
    return _mask_domain(tuple(config.people), tuple((a.name, a.pick) for a in config.attributes))


def generate_skeleton(config: PropositionalConfig, band: str, seed: int, coords: Coords) -> Skeleton:
    """A clue set whose only model over the declared domain is the shape, with its band = `band`."""
    validate_config(config, [band])
    low, high = band_interval(config.bands, band)
    rng = item_rng(seed, *coords)
    cells = _shape_cells(config, rng)
    if band in config.styles:
        return _styled_skeleton(config, band, rng, cells)
    domain = mask_domain(config)
    target = 1 << domain.index(cells)
    pools, masks = _candidates(config.model_dump_json(), _freeze(cells), tuple(_protected(config)))
    affinity: dict[str, float] = {kind: _affinity(c.weight, low, high) for kind, c in config.clues.items()}
    weights: dict[str, float] = {kind: c.weight for kind, c in config.clues.items()}
    best = math.nan
    for _ in range(config.budget):
        order = type_balanced_order(rng, pools, affinity)
        grown = grow(order, masks, target)
        if grown is None:
            raise PuzzleError(
                f"clue types {sorted(config.clues)} cannot single out the solution over the declared domain"
            )
        clues = grown
        if config.minimal:
            removal = sorted(range(len(clues)), key=lambda i: (affinity[clues[i].type], -i))
            clues = prune(clues, removal, lambda subset: meet(subset, masks, domain.full) == target)
        clues = pad(clues, order, config.redundancy, rng)
        score = sum(weights[c.type] for c in clues) / len(clues)
        if band_of(config.bands, score) == band:
            return Skeleton(tuple(clues), _symbol_solution(config, cells), band, score, config.redundancy)
        best = score if math.isnan(best) or abs(score - high) < abs(best - high) else best
    raise PuzzleError(
        f"no clue set reached difficulty band {band!r} (mean weight in ({low:g}, {high:g}]) within "
        f"{config.spent()}; closest mean was {best:.2f}"
    )


def _styled_skeleton(config: PropositionalConfig, band: str, rng: random.Random,
                     cells: dict[str, dict[str, int]]) -> Skeleton:
    """A skeleton in the band's style (spec_audits/puzzles/styled.py), up to `config.budget` draws."""
    style = config.styles[band]
    protect = () if style.identities else tuple(_protected(config))
    domain = mask_domain(config)
    target = 1 << domain.index(cells)
    pools, masks = _candidates(config.model_dump_json(), _freeze(cells), protect)
    if not style.one_person_compounds:
        pools = {kind: [c for c in pool if not one_person_compound(c)] for kind, pool in pools.items()}
    weights: dict[str, float] = {kind: c.weight for kind, c in config.clues.items()}
    for _ in range(config.budget):
        found = styled_attempt(style, rng, pools, masks, domain.full, target, weights)
        if found is not None:
            clues, redundant = found
            score = sum(weights[c.type] for c in clues) / len(clues)
            ordered = tuple(identity_order(clue, style.identity_first) for clue in clues)
            digits = rng.random() < style.count_digits
            return Skeleton(ordered, _symbol_solution(config, cells), band, score, redundant, protect, digits)
    low, high = style.score
    raise PuzzleError(
        f"no clue set in the style of band {band!r} ({style.clues[0]}-{style.clues[1]} clues, mean weight in "
        f"[{low:g}, {high:g}]) within {config.spent()}, or check the clue weights and the band's families"
    )


def _affinity(weight: float, low: float, high: float) -> float:
    """Prefer clue types whose weight lies in the band; the farther outside, the rarer."""
    distance = max(low - weight, weight - high, 0.0)
    return 1.0 / (1.0 + distance) ** 2


def _shape_cells(config: PropositionalConfig, rng: Any) -> dict[str, dict[str, int]]:
    if config.shape.kind == "declared":
        return {p: parse_cell(p, config.shape.cells[p], config.attributes) for p in config.people}
    while True:  # redraw until every value of every attribute is used (validate_config ensures possible)
        cells = {p: {a.name: rng.randrange(a.pick) for a in config.attributes} for p in config.people}
        if all(len({row[a.name] for row in cells.values()}) == a.pick for a in config.attributes):
            return cells


def _symbol_solution(config: PropositionalConfig, cells: dict[str, dict[str, int]]) -> dict[str, dict[str, str]]:
    prefixes = {a.name: a.prefix for a in config.attributes}
    return {p: {a: f"{prefixes[a]}{s + 1}" for a, s in row.items()} for p, row in cells.items()}


def _freeze(cells: dict[str, dict[str, int]]) -> tuple[tuple[str, tuple[tuple[str, int], ...]], ...]:
    return tuple((p, tuple(row.items())) for p, row in cells.items())


@lru_cache(maxsize=256)
def _candidates(
    config_json: str, frozen_cells: tuple[tuple[str, tuple[tuple[str, int], ...]], ...], protect: tuple[str, ...]
) -> tuple[dict[str, list[Clue]], dict[Clue, int]]:
    """Candidate clues by type and their masks (none alone identifying a person in `protect`); cached
    because a declared shape repeats every item."""
    config = PropositionalConfig.model_validate_json(config_json)
    cells = {p: dict(row) for p, row in frozen_cells}
    domain = mask_domain(config)
    pools: dict[str, list[Clue]] = {kind: pool for kind, pool in _true_clues(config, cells).items()
                                    if kind in config.clues}
    masks = {clue: domain.clue(clue) for pool in pools.values() for clue in pool}
    identities = [_identity(domain, cells, p) for p in protect]
    kept = {kind: [c for c in pool if _informative(masks[c], domain.full, identities)] for kind, pool in pools.items()}
    return kept, masks


def _true_clues(config: PropositionalConfig, cells: dict[str, dict[str, int]]) -> dict[str, list[Clue]]:
    """Every clue of every type that is true of the shape."""
    prefixes = {a.name: a.prefix for a in config.attributes}
    lits = [
        Lit(p, a.name, f"{a.prefix}{s + 1}") for p in config.people for a in config.attributes for s in range(a.pick)
    ]
    true = {lit for lit in lits if cells[lit.person][lit.attribute] == symbol_index(lit.value)}
    pairs = list(combinations(lits, 2))
    antecedents = true if config.true_antecedents else set(lits)
    return {
        "direct": [Unary("direct", lit) for lit in lits if lit in true],
        "negation": [Unary("negation", lit) for lit in lits if lit not in true],
        "conjunction": [Binary("conjunction", x, y) for x, y in pairs if x in true and y in true],
        "disjunction": [Binary("disjunction", x, y) for x, y in pairs if x in true or y in true],
        "implication": [
            Binary("implication", x, y) for x, y in permutations(lits, 2) if x in antecedents and y in true
        ],
        "biconditional": [
            Binary("biconditional", x, y) for x, y in pairs if x in antecedents and (x in true) == (y in true)
        ],
        "same": [
            Same((p, q), a) for p, q in combinations(config.people, 2) for a in prefixes if cells[p][a] == cells[q][a]
        ],
        "count": [
            Count(a.name, f"{a.prefix}{s + 1}", sum(row[a.name] == s for row in cells.values()))
            for a in config.attributes
            for s in range(a.pick)
        ],
    }


def _protected(config: PropositionalConfig) -> list[str]:
    return list(config.people if config.protect is None else config.protect)


def _identity(domain: MaskDomain, cells: dict[str, dict[str, int]], person: str) -> int:
    mask = domain.full
    for attribute, symbol in cells[person].items():
        mask &= domain.lit(person, attribute, symbol)
    return mask


def _informative(mask: int, full: int, identities: list[int]) -> bool:
    """Not a tautology, and does not alone entail any protected person's full identity."""
    return mask != full and all(mask & ~identity for identity in identities)


def draw_selections(config: PropositionalConfig, seed: int, coords: Coords, count: int) -> list[Selection]:
    """`count` demographic combinations (distinct unless `reuse.distinct_combinations` is off): per
    attribute, an ordered pick of distinct values."""
    options = [list(permutations(a.values, a.pick)) for a in config.attributes]
    total = math.prod(len(o) for o in options)
    rng = item_rng(seed, *coords)
    if not config.reuse.distinct_combinations:
        return [_selection(config, options, index) for index in rng.choices(range(total), k=count)]
    if count > total:
        raise PuzzleError(f"asked for {count} distinct combinations but only {total} exist")
    return _balanced(config, [_selection(config, options, i) for i in range(total)], count, rng)


def _balanced(config: PropositionalConfig, pool: list[Selection], count: int, rng: random.Random) -> list[Selection]:
    """`count` distinct combinations in which every value of every attribute is held as equally often
    as possible, in each slot (G1 and G2, R1 and R2): balanced group exposure (methods §3.4) that does
    not tie a group to the people A/B or C/D. A seeded random draw, then swaps with unused combinations
    while they lower the spread of the exposure counts (their sum of squares)."""
    shuffled = rng.sample(pool, len(pool))
    chosen, spare = shuffled[:count], shuffled[count:]
    counts: dict[tuple[str, int, str], int] = {}
    for selection in chosen:
        for key in _slots(selection):
            counts[key] = counts.get(key, 0) + 1
    improved = True
    while improved:
        improved = False
        for i, j in product(range(len(chosen)), range(len(spare))):
            changed = dict.fromkeys([*_slots(chosen[i]), *_slots(spare[j])], 0)
            for key in _slots(chosen[i]):
                changed[key] -= 1
            for key in _slots(spare[j]):
                changed[key] += 1
            if sum((counts.get(k, 0) + d) ** 2 - counts.get(k, 0) ** 2 for k, d in changed.items()) < 0:
                for key, delta in changed.items():
                    counts[key] = counts.get(key, 0) + delta
                chosen[i], spare[j] = spare[j], chosen[i]
                improved = True
    return chosen


def _slots(selection: Selection) -> list[tuple[str, int, str]]:
    """(attribute, slot, value) for every value a combination assigns."""
    return [(name, slot, value) for name, values in selection.items() for slot, value in enumerate(values)]


def _selection(config: PropositionalConfig, options: list[list[tuple[str, ...]]], index: int) -> Selection:
    selection: Selection = {}
    for attribute, choices in zip(config.attributes, options, strict=True):
        index, digit = divmod(index, len(choices))
        selection[attribute.name] = list(choices[digit])
    return selection


def reuse_groups(dilemmas: list[str], config: PropositionalConfig, seed: int, coords: Coords) -> list[list[str]]:
    """Dilemma ids shuffled and cut into groups of `reuse.dilemmas`: each group shares one skeleton."""
    size = config.reuse.dilemmas
    if len(dilemmas) % size:
        raise PuzzleError(f"{len(dilemmas)} dilemmas cannot be split into groups of {size} per puzzle")
    shuffled = item_rng(seed, *coords).sample(dilemmas, len(dilemmas))
    return [shuffled[i : i + size] for i in range(0, len(shuffled), size)]


def instantiate(config: PropositionalConfig, skeleton: Skeleton, selection: Selection) -> dict[str, Any]:
    """The suite row's `puzzle` field: the skeleton with values filled in, rendered and Z3-certified."""
    symbols = {f"{a.prefix}{i + 1}": value for a in config.attributes for i, value in enumerate(selection[a.name])}
    clues = [relabel(c, lambda _attribute, symbol: symbols[symbol]) for c in skeleton.clues]
    solution = {p: {a: symbols[s] for a, s in row.items()} for p, row in skeleton.solution.items()}
    # Pool order, not symbol order: listing G1 first would tell the reader A's gender (A is G1 R1).
    domain = {a.name: [v for v in a.values if v in selection[a.name]] for a in config.attributes}
    renderer = Renderer(config.attributes, config.clues, PROPOSITIONAL_PHRASINGS, config.literal, config.articles,
                        skeleton.count_digits)
    puzzle: dict[str, Any] = {
        "family": "propositional",
        "config": config.name,
        "people": list(config.people),
        "domain": domain,
        "domain_text": propositional_domain(config.people, domain),
        "symbols": symbols,
        "clues": [to_json(c) for c in clues],
        "text": [renderer.clue(c) for c in clues],
        "solution": solution,
        "protect": _protected(config) if skeleton.protect is None else list(skeleton.protect),
        "difficulty": {
            "band": skeleton.band,
            "score": round(skeleton.score, 6),
            "redundant": skeleton.redundant,
            "metric": "mean_clue_weight",
            "weights": {kind: c.weight for kind, c in config.clues.items()},
            "bands": [b.model_dump() for b in config.bands],
        },
    }
    puzzle["certificate"] = certify(puzzle)
    return puzzle


def generate_puzzle(
    config: PropositionalConfig, band: str, seed: int, coords: Coords, selection: Selection
) -> dict[str, Any]:
    """One certified puzzle: `generate_skeleton` then `instantiate`."""
    return instantiate(config, generate_skeleton(config, band, seed, coords), selection)


def expect_of(puzzle: dict[str, Any]) -> dict[str, Any]:
    """The suite row's `expect` field for a puzzle: the solution the model must report."""
    return {"solution": puzzle["solution"]}
