"""`spec plan` for puzzle-solving designs: how each puzzle family and band's exact-match accuracy
difference is sized (spec_audits/stats/power.py).

A band's accuracy is planned as the difference two models make on it (the paired comparison of the same
puzzles, summary.json's `comparisons`): the puzzles are the clusters, each answered by both, and a
puzzle's samples share its wording (the icc). An answer is solved or not, so its variance is at most 1/4.
This family reads no pilot yet: the variances are always the largest possible and the intra-cluster
correlation the assumed one, as the plan's output states.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from spec_audits.families.puzzle_solving.compare import statistic_name
from spec_audits.sdk import Suite, Variance


def variances(suite: Suite, pilot: Path | None, icc: float) -> list[Variance]:
    source = f"assumed: answer variance at its largest (1/4), icc {icc:g} between a puzzle's samples" + \
        (f" (the pilot {pilot} is not read by this family)" if pilot is not None else "")
    cells = pd.DataFrame([{**row.cell, "answers": row.samples} for row in suite.rows])
    found = []
    for (family, band), frame in cells.groupby(["family", "band"], sort=True):
        n = int(frame["answers"].sum())
        found.append(Variance(f"{statistic_name(family, band)}, model vs model", n, n,
                              int(frame["index"].nunique()), 0.25, icc, source))
    return found
