"""Puzzle solving: certified logic puzzles (propositional or zebra), asked by difficulty band and answered
by their solution, scored by exact match and per-cell accuracy per band (a capability control for cue
audits). docs/puzzles.md, "Puzzle-solving designs", describes the design.

    design.py    stages 3 and 4: the puzzle block and template resolved, puzzles certified, rows expanded
    score.py     `spec score` (accuracy per band through runner/puzzle_scores.py) and `spec report`
"""

from __future__ import annotations

from spec_audits.families.puzzle_solving.clauses import SYNTAX
from spec_audits.families.puzzle_solving.design import CLAUSES, prepare, resolve
from spec_audits.sdk import Family, Form, lazy

FAMILY = Family(
    name="puzzle_solving",
    title="puzzle-solving",
    clauses=CLAUSES,
    syntax=SYNTAX,
    answers=(Form("solution", "solution PUZZLE"),),
    conditions=(),
    analysis_options=(),
    check=resolve,
    prepare=prepare,
    score=lazy("spec_audits.families.puzzle_solving.score", "score"),
    report=lazy("spec_audits.families.puzzle_solving.score", "report"),
    docs="docs/puzzles.md",
)
