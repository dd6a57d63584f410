"""Cue visibility (seed 003): identity stated outright (Direct) or hidden in a logic puzzle proved unique
with Z3 (Puzzled), against a Neutral baseline. docs/puzzles.md describes the puzzles and the scoring.

    check.py     stage 3: clauses checked, data read, the puzzle block resolved
    expand.py    stage 4: templates compiled, combinations drawn, puzzles certified; rows expanded
    score/       the tidy frame of probe answers (load.py) and pure metrics over it; outputs.py writes them
    report.py    `spec report`: capability, Net and cue gap tables with the Net-by-group plot
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from families.cue.check import CLAUSES, resolve_cue
from families.cue.expand import prepare_cue
from families.interface import Family
from runner.report.document import Document


# Scoring and reporting import pandas, scipy and matplotlib: loaded on first use, so compiling stays light.
def _score(run_dir: Path, out: Path, options: dict[str, Any]) -> list[str]:
    from families.cue.score.load import load_cue_run
    from families.cue.score.outputs import score_run

    summary = score_run(load_cue_run(run_dir), out)
    models = len(summary["models"])
    return [f"{summary['answers']} cue-visibility answers scored ({models} model{'s' * (models != 1)}) -> {out}"]


def _report(score_dir: Path, plots_dir: Path) -> Document:
    from families.cue.report import cue_report

    return cue_report(score_dir, plots_dir)


FAMILY = Family(
    name="cue_visibility",
    title="cue-visibility",
    clauses=CLAUSES,
    check=resolve_cue,
    prepare=prepare_cue,
    score=_score,
    report=_report,
    docs="docs/puzzles.md",
)
