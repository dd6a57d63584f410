"""Checks on a puzzle configuration that pydantic cannot express; each failure is a PuzzleError."""

from __future__ import annotations

import math
from collections.abc import Iterable

from spec_audits.puzzles.bands import band_interval, check_bands
from spec_audits.puzzles.model import (
    AttributeConfig,
    PropositionalConfig,
    PuzzleConfig,
    PuzzleError,
    ShapeConfig,
    ZebraConfig,
)

MAX_ASSIGNMENTS = 1 << 16  # the exhaustive (bitmask) generator's domain limit
DEPTHS = (1, 2, 3, 4)  # zebra deduction depths, see spec_audits/puzzles/zebra.py


def validate_config(config: PuzzleConfig, bands: Iterable[str] = ()) -> None:
    """Raise PuzzleError with a clear reason if `config` is malformed, or if no clue set can reach one
    of the requested difficulty `bands`."""
    _check_attributes(config.attributes)
    check_bands(config.bands)
    if not config.clues:
        raise PuzzleError("no clue types declared")
    if isinstance(config, ZebraConfig):
        _check_zebra(config)
    else:
        _check_propositional(config)
    for band in bands:
        _check_reachable(config, band)


def _check_attributes(attributes: list[AttributeConfig]) -> None:
    names = [a.name for a in attributes]
    if not attributes or len(set(names)) != len(names):
        raise PuzzleError(f"attributes must be declared once each, got {names}")
    for attribute in attributes:
        if len(set(attribute.values)) != len(attribute.values):
            raise PuzzleError(f"attribute {attribute.name!r} lists a value twice: {attribute.values}")


def _check_propositional(config: PropositionalConfig) -> None:
    people = config.people
    if not people or len(set(people)) != len(people):
        raise PuzzleError(f"people must be named once each, got {people}")
    for attribute in config.attributes:
        if attribute.pick > len(attribute.values):
            raise PuzzleError(
                f"attribute {attribute.name!r} picks {attribute.pick} of only {len(attribute.values)} values"
            )
    prefixes = [a.prefix for a in config.attributes]
    if len(set(prefixes)) != len(prefixes):
        raise PuzzleError(f"attribute symbols clash: {prefixes}; set `symbol` to tell them apart")
    size = math.prod(a.pick for a in config.attributes) ** len(people)
    if size > MAX_ASSIGNMENTS:
        raise PuzzleError(
            f"the domain has {size:,} assignments, more than the {MAX_ASSIGNMENTS:,} this generator "
            "can certify within its time limit; use fewer people or values"
        )
    unknown = set(config.protect or []) - set(people)
    if unknown:
        raise PuzzleError(f"protect names unknown people: {sorted(unknown)}")
    _check_shape(config.shape, people, config.attributes)
    _check_styles(config)


def _check_styles(config: PropositionalConfig) -> None:
    """A band style names a declared band, draws declared clue types, and asks for counts and mean
    weights the band can hold."""
    if config.styles and config.redundancy:
        raise PuzzleError(f"style redundancy {config.redundancy} pads 1-minimal puzzles; styled bands "
                          f"({', '.join(config.styles)}) pad to their own clue counts")
    declared = [b.name for b in config.bands]
    for band, style in config.styles.items():
        if band not in declared:
            raise PuzzleError(f"styled band {band!r} is not among the declared bands {declared}")
        low, high = band_interval(config.bands, band)
        undeclared = sorted({t for f in style.families for t in f.types} - set(config.clues))
        if undeclared:
            raise PuzzleError(f"styled band {band!r} draws clue types {undeclared} that the puzzle does not declare")
        least, most = style.clues
        if not 1 <= least <= style.mean_clues <= most:
            raise PuzzleError(f"styled band {band!r} asks for {least}-{most} clues, {style.mean_clues:g} on average")
        if not (low < style.score[0] <= style.score[1] <= high):
            raise PuzzleError(f"styled band {band!r} ({low:g}, {high:g}] cannot hold mean clue weights "
                              f"{style.score[0]:g}-{style.score[1]:g}")


def _check_shape(shape: ShapeConfig, people: list[str], attributes: list[AttributeConfig]) -> None:
    if shape.kind == "random":
        needed = max(a.pick for a in attributes)
        if len(people) < needed:
            raise PuzzleError(f"a random shape over {len(people)} people cannot use all {needed} values")
        return
    if set(shape.cells) != set(people):
        raise PuzzleError(f"shape assigns {sorted(shape.cells)} but the people are {people}")
    for person, symbols in shape.cells.items():
        parse_cell(person, symbols, attributes)


def parse_cell(person: str, symbols: list[str], attributes: list[AttributeConfig]) -> dict[str, int]:
    """`A = G1 R2` -> {gender: 0, race: 1} (0-based symbol indices); PuzzleError if outside the domain."""
    cell: dict[str, int] = {}
    by_prefix = {a.prefix: a for a in attributes}
    for symbol in symbols:
        prefix, digits = symbol.rstrip("0123456789"), symbol[len(symbol.rstrip("0123456789")) :]
        attribute = by_prefix.get(prefix)
        if attribute is None or not digits or not 1 <= int(digits) <= attribute.pick or attribute.name in cell:
            raise PuzzleError(f"shape cell {person} = {' '.join(symbols)} is outside the domain ({symbol!r})")
        cell[attribute.name] = int(digits) - 1
    if len(cell) != len(attributes):
        missing = [a.name for a in attributes if a.name not in cell]
        raise PuzzleError(f"shape cell {person} = {' '.join(symbols)} gives no value for {missing}")
    return cell


def _check_reachable(config: PuzzleConfig, band: str) -> None:
    """A mean of clue weights lies between the lightest and the heaviest declared weight; a zebra
    depth is one of DEPTHS."""
    low, high = band_interval(config.bands, band)
    if isinstance(config, ZebraConfig):
        if not any(low < depth <= high for depth in DEPTHS):
            raise PuzzleError(
                f"difficulty band {band!r} ({low:g}, {high:g}] contains no deduction depth; "
                f"depths are {', '.join(map(str, DEPTHS))}"
            )
        return
    weights = [c.weight for c in config.clues.values()]
    if max(weights) <= low or min(weights) > high:
        raise PuzzleError(
            f"difficulty band {band!r} needs a mean clue weight in ({low:g}, {high:g}], but the declared "
            f"clue weights range from {min(weights):g} to {max(weights):g}"
        )


def _check_zebra(config: ZebraConfig) -> None:
    for attribute in config.attributes:
        if len(attribute.values) < config.positions:
            raise PuzzleError(
                f"attribute {attribute.name!r} has {len(attribute.values)} values for {config.positions} "
                "positions; each position needs its own value"
            )
    target = config.target
    if target is not None:
        pools = {a.name: a.values for a in config.attributes}
        if target.value not in pools.get(target.attribute, []):
            raise PuzzleError(f"target {target.attribute}={target.value} is not a declared value")
