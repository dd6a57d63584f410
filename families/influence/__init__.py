"""Direction-flipped influence pairs (seed 000): every comparison with no cue, a cue toward group A and
the mirror cue toward group B. docs/scoring.md defines every statistic.

    check.py     stage 3: the design's clauses resolved against the spec's factors, influences, templates
    expand.py    stage 4: templates compiled, comparisons fixed, balance proved; rows expanded
    score/       counts -> per-condition statistics -> BH-FDR -> headline summary (methods §6)
    scoring.py   `spec score` for runs and published counts tables
    report.py    `spec report`: headline, breakdowns, regression, noise floor; plots.py draws its figures
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from families.influence.check import CLAUSES, resolve_pairs
from families.influence.expand import prepare
from families.interface import Family
from runner.report.document import Document


# Scoring and reporting import pandas, scipy and matplotlib: loaded on first use, so compiling stays light.
def _score(run_dir: Path, out: Path, options: dict[str, Any]) -> list[str]:
    from families.influence.scoring import score_run

    return score_run(run_dir, out, options)


def _score_table(counts_file: Path, out: Path, options: dict[str, Any]) -> list[str]:
    from families.influence.scoring import score_table

    return score_table(counts_file, out, options)


def _report(score_dir: Path, plots_dir: Path) -> Document:
    from families.influence.report import influence_report

    return influence_report(score_dir, plots_dir)


FAMILY = Family(
    name="influence_pairs",
    title="influence-pairs",
    clauses=CLAUSES,
    check=resolve_pairs,
    prepare=prepare,
    score=_score,
    report=_report,
    score_options=("alpha", "asym_variance", "unpooled", "bootstrap", "seed", "noise_dir"),
    docs="docs/scoring.md",
    score_counts=_score_table,
)
