"""Zebra-style position puzzles: N people in a row, each attribute a permutation of N values.

The oracle is a pure-Python deduction engine over position bitmasks (one per attribute value).
Deduction depth: 1 = forward chaining (a relational clue fires once one of its items is placed) plus
all-different singles; 2 = every clue made arc consistent, plus singles; 3 = 2 plus one level of
trial-and-contradiction; 4 = anything that needs search. "Solved at depth <= d" is
sound, so it doubles as a uniqueness oracle; uniqueness itself is propagation plus search counting
up to two models. Every emitted puzzle is then certified by Z3 (solve.certify).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from itertools import islice
from typing import Any

from spec_audits.contract.seeding import Coords, item_rng
from spec_audits.puzzles.bands import band_interval, band_of
from spec_audits.puzzles.clues import At, Clue, Item, Pair, from_json, to_json
from spec_audits.puzzles.model import PuzzleError, ZebraConfig
from spec_audits.puzzles.pruning import first_accepted_prefix, prune, type_balanced_order
from spec_audits.puzzles.render import ZEBRA_PHRASINGS, Renderer, zebra_domain
from spec_audits.puzzles.solve import certify
from spec_audits.puzzles.validate import validate_config

AT, NOT_AT, SAME, NOT_SAME, LEFT_OF, DIRECTLY_LEFT, NEXT_TO = range(7)
CODES = {
    "at": AT,
    "not_at": NOT_AT,
    "same": SAME,
    "not_same": NOT_SAME,
    "left_of": LEFT_OF,
    "directly_left": DIRECTLY_LEFT,
    "next_to": NEXT_TO,
}
Compiled = tuple[int, int, int, int]  # (code, item i, item j (= i for at/not_at), 0-based position)


class Grid:
    """Position domains of a K x N grid: item i = attribute * N + value index, bit p = position p+1."""

    def __init__(self, positions: int, domain: Mapping[str, list[str]]) -> None:
        self.n = positions
        self.attributes = list(domain)
        self.full = (1 << positions) - 1
        self.index = {(a, v): k * positions + i for k, a in enumerate(domain) for i, v in enumerate(domain[a])}
        self.items = len(self.index)

    def compile(self, clue: Clue) -> Compiled:
        if isinstance(clue, At):
            item = self._item(clue.item)
            return (CODES[clue.type], item, item, clue.position - 1)
        assert isinstance(clue, Pair)
        return (CODES[clue.type], self._item(clue.first), self._item(clue.second), 0)

    def _item(self, item: Item) -> int:
        return self.index[(item.attribute, item.value)]

    def start(self) -> list[int]:
        return [self.full] * self.items

    def propagate(self, dom: list[int], clues: list[Compiled], weak: bool = False) -> bool:
        """Narrow `dom` in place to a fixpoint; False on contradiction. `weak` fires a relational clue
        only once one of its two items is placed (forward chaining); otherwise every clue is made
        arc consistent."""
        full, n = self.full, self.n
        dirty = set(range(0, self.items, n))  # first item of each attribute whose domains changed
        changed = True
        while changed:
            changed = False
            for code, i, j, p in clues:
                di, dj = dom[i], dom[j]
                if weak and code > NOT_AT and di & (di - 1) and dj & (dj - 1):
                    continue
                if code == AT:
                    ni = nj = di & (1 << p)
                elif code == NOT_AT:
                    ni = nj = di & ~(1 << p)
                elif code == SAME:
                    ni = nj = di & dj
                elif code == NOT_SAME:
                    ni = di & ~dj if dj & (dj - 1) == 0 else di
                    nj = dj & ~ni if ni & (ni - 1) == 0 else dj
                elif code == LEFT_OF:
                    ni = di & ((1 << (dj.bit_length() - 1)) - 1) if dj else 0
                    nj = dj & ~(((ni & -ni) << 1) - 1)
                elif code == DIRECTLY_LEFT:
                    ni = di & (dj >> 1)
                    nj = dj & (ni << 1)
                else:
                    ni = di & ((dj << 1) | (dj >> 1)) & full
                    nj = dj & ((ni << 1) | (ni >> 1)) & full
                if ni != di or nj != dj:
                    if not ni or not nj:
                        return False
                    dom[i], dom[j] = ni, nj
                    dirty.update((i - i % n, j - j % n))
                    changed = True
            narrowed = set()
            for start in dirty:
                status = _all_different(dom, start, n, full)
                if status < 0:
                    return False
                if status:
                    narrowed.add(start)
            dirty = narrowed
            changed = changed or bool(narrowed)
        return True

    def solved(self, dom: list[int]) -> bool:
        return all(d & (d - 1) == 0 for d in dom)

    def probe(self, dom: list[int], clues: list[Compiled]) -> bool:
        """Depth 3: remove every position whose trial propagates to a contradiction; False if none is
        left for some item."""
        if not self.propagate(dom, clues):
            return False
        changed = True
        while changed and not self.solved(dom):
            changed = False
            for i in range(self.items):
                for bit in _bits(dom[i]) if dom[i] & (dom[i] - 1) else ():
                    if not dom[i] & bit:
                        continue
                    trial = dom.copy()
                    trial[i] = bit
                    if not self.propagate(trial, clues):
                        dom[i] &= ~bit
                        if not self.propagate(dom, clues):
                            return False
                        changed = True
        return True

    def count(self, dom: list[int], clues: list[Compiled], limit: int = 2) -> int:
        """Models below `dom`, counted up to `limit`, by propagation and branching."""
        if not self.propagate(dom, clues):
            return 0
        open_items = [i for i in range(self.items) if dom[i] & (dom[i] - 1)]
        if not open_items:
            return 1
        i = min(open_items, key=lambda k: dom[k].bit_count())
        found = 0
        for bit in _bits(dom[i]):
            trial = dom.copy()
            trial[i] = bit
            found += self.count(trial, clues, limit - found)
            if found >= limit:
                break
        return found

    def solved_at(self, depth: int, clues: list[Compiled]) -> bool:
        """Whether deduction of the given depth (see the module docstring) pins the whole grid."""
        dom = self.start()
        if depth <= 2:
            return self.propagate(dom, clues, weak=depth == 1) and self.solved(dom)
        if depth == 3:
            return self.probe(dom, clues) and self.solved(dom)
        return self.count(dom, clues) == 1

    def depth(self, clues: list[Compiled]) -> int:
        """The weakest deduction depth that solves the puzzle (4 when only search does)."""
        return next((d for d in (1, 2, 3) if self.solved_at(d, clues)), 4)


def _bits(mask: int) -> list[int]:
    bits = []
    while mask:
        low = mask & -mask
        bits.append(low)
        mask ^= low
    return bits


def _all_different(dom: list[int], start: int, n: int, full: int) -> int:
    """Singles for one attribute: -1 contradiction, 1 narrowed, 0 unchanged."""
    fixed = 0
    for k in range(start, start + n):
        d = dom[k]
        if d & (d - 1) == 0:
            if d & fixed:
                return -1
            fixed |= d
    once = twice = 0
    for k in range(start, start + n):
        d = dom[k]
        twice |= once & d
        once |= d
    if once != full:
        return -1
    hidden = once & ~twice
    changed = 0
    for k in range(start, start + n):
        d = dom[k]
        new = d & hidden if d & hidden else (d if d & (d - 1) == 0 else d & ~fixed)
        if new != d:
            if not new or new & (new - 1) and new & hidden:
                return -1
            dom[k] = new
            changed = 1
    return changed


def generate_zebra(config: ZebraConfig, band: str, seed: int, coords: Coords) -> dict[str, Any]:
    """One certified zebra puzzle in band `band` (the suite row's `puzzle` field)."""
    validate_config(config, [band])
    low, high = band_interval(config.bands, band)
    rng = item_rng(seed, *coords)
    domain, solution = _draw_solution(config, rng)
    grid = Grid(config.positions, domain)
    pools = _candidates(config, grid, solution)
    affinity = {kind: c.weight for kind, c in config.clues.items()}
    accepts = _oracle(grid, high)
    total = sum(map(len, pools.values()))
    for _ in range(config.budget):
        drawn = _Drawn(grid, type_balanced_order(rng, pools, affinity))
        size = first_accepted_prefix(total, lambda n, drawn=drawn: accepts([c for _, c in drawn.prefix(n)]))
        if size is None:
            raise PuzzleError(f"clue types {sorted(config.clues)} cannot pin a {config.positions}-person grid")
        chosen = drawn.prefix(size)
        if config.minimal:
            chosen = prune(chosen, rng.sample(range(size), size), lambda s: accepts([c for _, c in s]))
        depth = grid.depth([c for _, c in chosen])
        if band_of(config.bands, depth) == band:
            return _emit(config, domain, solution, [c for c, _ in chosen], band, depth)
    raise PuzzleError(
        f"no {config.positions}x{len(config.attributes)} clue set reached difficulty band {band!r} "
        f"(deduction depth in ({low:g}, {high:g}]) within {config.spent()}"
    )


class _Drawn:
    """One attempt's seeded clue order, drawn and compiled only as far as the search looks."""

    def __init__(self, grid: Grid, draws: Iterator[Clue]) -> None:
        self._grid, self._draws = grid, draws
        self._drawn: list[tuple[Clue, Compiled]] = []

    def prefix(self, size: int) -> list[tuple[Clue, Compiled]]:
        for clue in islice(self._draws, max(0, size - len(self._drawn))):
            self._drawn.append((clue, self._grid.compile(clue)))
        return self._drawn[:size]


def _oracle(grid: Grid, high: float) -> Callable[[list[Compiled]], bool]:
    """For a band capped at depth d, 'solved at depth <= d'; for an open band, uniqueness."""
    depth = 4 if high >= 4 else max(1, int(high))
    return lambda clues: grid.solved_at(depth, clues)


def _draw_solution(config: ZebraConfig, rng: Any) -> tuple[dict[str, list[str]], dict[str, dict[str, str]]]:
    """Per attribute: N values from the pool (the target's value always among them), placed at random.

    The domain lists the picked values in pool order, so it reveals nothing about positions."""
    domain: dict[str, list[str]] = {}
    rows: list[dict[str, str]] = [{} for _ in range(config.positions)]
    for attribute in config.attributes:
        required = [config.target.value] if config.target and config.target.attribute == attribute.name else []
        others = [v for v in attribute.values if v not in required]
        picked = set(required + rng.sample(others, config.positions - len(required)))
        domain[attribute.name] = [v for v in attribute.values if v in picked]
        for row, value in zip(rows, rng.sample(domain[attribute.name], config.positions), strict=True):
            row[attribute.name] = value
    return domain, {str(p + 1): row for p, row in enumerate(rows)}


def _candidates(config: ZebraConfig, grid: Grid, solution: dict[str, dict[str, str]]) -> dict[str, list[Clue]]:
    """Every true clue by type, minus clues that place the target on their own."""
    where = {Item(a, v): int(p) for p, row in solution.items() for a, v in row.items()}
    items = sorted(where, key=lambda it: grid.index[(it.attribute, it.value)])
    pairs = [(x, y) for x in items for y in items if x != y]
    cross = [(x, y) for x, y in pairs if x.attribute != y.attribute]
    pools: dict[str, list[Clue]] = {
        "at": [At("at", x, where[x]) for x in items],
        "not_at": [At("not_at", x, p) for x in items for p in range(1, grid.n + 1) if p != where[x]],
        "same": [Pair("same", x, y) for x, y in cross if where[x] == where[y] and x.attribute < y.attribute],
        "not_same": [Pair("not_same", x, y) for x, y in cross if where[x] != where[y] and x.attribute < y.attribute],
        "left_of": [Pair("left_of", x, y) for x, y in pairs if where[x] < where[y]],
        "directly_left": [Pair("directly_left", x, y) for x, y in pairs if where[x] + 1 == where[y]],
        "next_to": [Pair("next_to", x, y) for x, y in pairs if abs(where[x] - where[y]) == 1 and x.value < y.value],
    }
    pools = {kind: pool for kind, pool in pools.items() if kind in config.clues}
    if config.target is None:
        return pools
    target = grid.index[(config.target.attribute, config.target.value)]
    return {kind: [c for c in pool if not _places(grid, c, target)] for kind, pool in pools.items()}


def _places(grid: Grid, clue: Clue, target: int) -> bool:
    """Whether the clue alone (with all-different) fixes the target's position. A clue that names no
    value of the target's attribute never narrows the target's domain, so it is skipped."""
    compiled = grid.compile(clue)
    if target // grid.n not in (compiled[1] // grid.n, compiled[2] // grid.n):
        return False
    dom = grid.start()
    grid.propagate(dom, [compiled])
    return dom[target] & (dom[target] - 1) == 0


def _emit(
    config: ZebraConfig,
    domain: dict[str, list[str]],
    solution: dict[str, dict[str, str]],
    clues: list[Clue],
    band: str,
    depth: int,
) -> dict[str, Any]:
    renderer = Renderer(config.attributes, config.clues, ZEBRA_PHRASINGS)
    target = config.target
    puzzle: dict[str, Any] = {
        "family": "zebra",
        "config": config.name,
        "people": list(solution),
        "domain": domain,
        "domain_text": zebra_domain(config.positions, domain),
        "clues": [to_json(c) for c in clues],
        "text": [renderer.clue(c) for c in clues],
        "solution": solution,
        "target": None
        if target is None
        else {
            "attribute": target.attribute,
            "value": target.value,
            "position": Item(target.attribute, target.value).position(solution),
        },
        "difficulty": {
            "band": band,
            "score": depth,
            "metric": "deduction_depth",
            "bands": [b.model_dump() for b in config.bands],
        },
    }
    puzzle["certificate"] = certify(puzzle)
    return puzzle


def depth_of(puzzle: Mapping[str, Any]) -> int:
    """Recompute a stored zebra puzzle's deduction depth."""
    grid = Grid(len(puzzle["people"]), puzzle["domain"])
    return grid.depth([grid.compile(from_json(c)) for c in puzzle["clues"]])
