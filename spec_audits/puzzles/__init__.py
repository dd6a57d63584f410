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

Each name is imported on first use (Z3 and the generators are a tenth of a second): the `puzzle` block's
declarations (syntax.py) load with every spec, the solver only for a spec that holds puzzles.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
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

_HOME = {
    "AttributeConfig": "spec_audits.puzzles.model",
    "Band": "spec_audits.puzzles.model",
    "ClueTypeConfig": "spec_audits.puzzles.model",
    "PropositionalConfig": "spec_audits.puzzles.model",
    "PuzzleConfig": "spec_audits.puzzles.model",
    "PuzzleError": "spec_audits.puzzles.model",
    "ReuseConfig": "spec_audits.puzzles.model",
    "ShapeConfig": "spec_audits.puzzles.model",
    "ZebraConfig": "spec_audits.puzzles.model",
    "ZebraTarget": "spec_audits.puzzles.model",
    "Skeleton": "spec_audits.puzzles.propositional",
    "draw_selections": "spec_audits.puzzles.propositional",
    "expect_of": "spec_audits.puzzles.propositional",
    "generate_puzzle": "spec_audits.puzzles.propositional",
    "generate_skeleton": "spec_audits.puzzles.propositional",
    "instantiate": "spec_audits.puzzles.propositional",
    "reuse_groups": "spec_audits.puzzles.propositional",
    "validate_config": "spec_audits.puzzles.validate",
    "reprove": "spec_audits.puzzles.verify",
    "generate_zebra": "spec_audits.puzzles.zebra",
}

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


def __getattr__(name: str) -> Any:
    if name not in _HOME:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(_HOME[name]), name)
