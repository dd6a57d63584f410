"""`spec plan` for puzzle-solving designs: how each puzzle family and band's exact-match accuracy
difference is sized (spec_audits/stats/power.py).

A band's accuracy is planned as the difference two models make on it (the paired comparison of the same
puzzles, summary.json's `comparisons`): the puzzles are the clusters, each answered by both, and a
puzzle's samples share its wording (the icc). An answer is solved or not, so its variance is at most 1/4:
the assumption without a pilot, with the assumed icc. A pilot run (one model's answers) gives each band's
answer variance and the correlation between a puzzle's samples (`from_one_arm`: the other model is planned
alike); where it cannot tell (fewer than two answers or puzzles in the band, or answers that do not vary)
the plan keeps the assumptions and says why.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from spec_audits.families.puzzle_solving.compare import statistic_name
from spec_audits.families.puzzle_solving.score import run_table
from spec_audits.sdk import PILOT, SOLVED, Assumed, Suite, Variance, from_one_arm, pilot_spread


def variances(suite: Suite, pilot: Path | None, icc: float) -> list[Variance]:
    assumed = Assumed(0.25, icc, f"assumed: answer variance at its largest (1/4), icc {icc:g} between a puzzle's "
                      "samples")
    cells = pd.DataFrame([{**row.cell, "answers": row.samples} for row in suite.rows])
    answers = _pilot_answers(pilot) if pilot is not None else None
    found = []
    for (family, band), frame in cells.groupby(["family", "band"], sort=True):
        n = int(frame["answers"].sum())
        unit_var, rho, source = _spread(answers, pilot, (str(family), str(band)), assumed)
        found.append(Variance(f"{statistic_name(family, band)}, model vs model", n, n,
                              int(frame["index"].nunique()), unit_var, rho, source, measured=source.startswith(PILOT)))
    return found


def _pilot_answers(pilot: Path) -> pd.DataFrame:
    """The pilot's answered lines (solved_table's), with y: 1 when the puzzle was solved."""
    table = run_table(pilot)[1]
    if table.empty:
        return pd.DataFrame(columns=["family", "band", "item_id", "y"])
    answered = table[~table["failed"] & table["outcome"].notna()]
    return answered.assign(y=(answered["outcome"] == SOLVED).astype(float))


def _spread(answers: pd.DataFrame | None, pilot: Path | None, band: tuple[str, str],
            assumed: Assumed) -> tuple[float, float, str]:
    """(unit variance, icc, where they come from) of one band's accuracy."""
    if answers is None:
        return pilot_spread(None, pilot, 0, assumed)
    own = answers[(answers["family"].astype(str) == band[0]) & (answers["band"].astype(str) == band[1])]
    clusters = np.unique(own["item_id"].to_numpy(str), return_inverse=True)[1].astype(np.int64)
    return pilot_spread(from_one_arm(own["y"].to_numpy(float), clusters), pilot, len(answers), assumed)
