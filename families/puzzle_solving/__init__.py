"""Puzzle solving: certified logic puzzles (propositional or zebra), asked by difficulty band and answered
by their solution, scored by exact match and per-cell accuracy per band (a capability control for cue
audits). docs/puzzles.md, "Puzzle-solving designs", describes the design.

    design.py    stages 3 and 4: the puzzle block and template resolved, puzzles certified, rows expanded
    plan.py      `spec plan`: the variance of each band's accuracy difference
    compare.py   several models' paired differences on each band's accuracy
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
    score_runs=lazy("spec_audits.families.puzzle_solving.score", "score_runs"),
    report=lazy("spec_audits.families.puzzle_solving.score", "report"),
    variances=lazy("spec_audits.families.puzzle_solving.plan", "variances"),
    docs="docs/puzzles.md",
)
