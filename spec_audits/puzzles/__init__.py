"""Logic puzzles whose unique solution (proved with Z3) encodes a demographic assignment.

Used by the families whose designs hold puzzles (the cue family, through block.py: a spec's `puzzle`
block resolved to a config) and by `spec verify`, which re-proves every bundled puzzle. Public API:
  validate_config(config)                                  -> None, or PuzzleError
  generate_skeleton(config, band, seed, coords)            -> Skeleton (seed-003 family, over symbols)
  draw_selections(config, seed, coords, count)             -> distinct demographic combinations
  instantiate(config, skeleton, selection)                 -> puzzle dict (certified)
  generate_puzzle(config, band, seed, coords, selection)   -> puzzle dict (the two steps at once)
  generate_zebra(config, band, seed, coords)               -> puzzle dict (certified)
  expect_of(puzzle)                                        -> the row's `expect` field
  reprove(puzzle, rlimit)                                  -> list of problems (empty: sound)
See docs/puzzles.md for the JSON shape.
"""

from spec_audits.puzzles.model import (
    AttributeConfig,
    Band,
    ClueTypeConfig,
    PropositionalConfig,
    PuzzleConfig,
    PuzzleError,
    ReuseConfig,
    ShapeConfig,
    ZebraConfig,
    ZebraTarget,
)
from spec_audits.puzzles.propositional import (
    Skeleton,
    draw_selections,
    expect_of,
    generate_puzzle,
    generate_skeleton,
    instantiate,
    reuse_groups,
)
from spec_audits.puzzles.validate import validate_config
from spec_audits.puzzles.verify import reprove
from spec_audits.puzzles.zebra import generate_zebra

__all__ = [
    "AttributeConfig",
    "Band",
    "ClueTypeConfig",
    "PropositionalConfig",
    "PuzzleConfig",
    "PuzzleError",
    "ReuseConfig",
    "ShapeConfig",
    "Skeleton",
    "ZebraConfig",
    "ZebraTarget",
    "draw_selections",
    "expect_of",
    "generate_puzzle",
    "generate_skeleton",
    "generate_zebra",
    "instantiate",
    "reprove",
    "reuse_groups",
    "validate_config",
]
