"""`spec plan` for conditional-bias designs: how Table 1's effects' variances are computed
(spec_audits/stats/power.py).

Δn (presence: |m_n| - |m∅|), δ (content: |m_b| - |m_n|) and Δb (total: |m_b| - |m∅|) are each the mean
of one difference per bank row, tested with a one-sample t over the rows (docs/cognitive-bias.md), so the
bank rows are the clusters, N of them, with N - 1 degrees of freedom. In power.py's two-arm form that is
n1 = n0 = N, one answer of each arm per row (no design effect: the icc does not enter, and a pilot's is 0),
and a unit variance of half the per-row difference's variance: var(d) / N = (var(d) / 2) (1/N + 1/N). |m|
lies in [0, 1], so a difference varies by at most 1 ((max - min)^2 / 4 over [-1, 1]): the unit variance is 1/2
without a pilot. A pilot run gives var(d) from its bank rows' differences (rows.csv's presence, content and
total); where it cannot tell (fewer than two rows with the difference, or differences that do not vary) the
plan keeps the largest and says why.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from spec_audits.families.cognitive_bias.score.compare import NAMES
from spec_audits.families.cognitive_bias.score.load import load_bias_run
from spec_audits.sdk import Assumed, Pilot, Suite, Variance, pilot_spread


def variances(suite: Suite, pilot: Path | None, icc: float) -> list[Variance]:
    assumed = Assumed(0.5, icc, "assumed: per-row difference variance at its largest (1), one difference per "
                      "bank row")
    rows = len({(row.unit, (row.meta or {}).get("bank_row")) for row in suite.rows
                if (row.meta or {}).get("bank_row") is not None})
    run = load_bias_run(pilot) if pilot is not None else None
    answers = int(run.abstentions[["answered", "abstained"]].to_numpy().sum()) if run is not None else 0
    found = []
    for column, name in NAMES.items():
        measured = _from_rows(run.rows[column]) if run is not None else None
        unit_var, rho, source = pilot_spread(measured, pilot, answers, assumed)
        found.append(Variance(name, rows, rows, rows, unit_var, rho, source))
    return found


def _from_rows(d: pd.Series) -> Pilot | str:
    """Half the variance of one difference per bank row (the two-arm form's unit variance), no clustering."""
    kept = d.dropna().to_numpy(float)
    if len(kept) < 2:
        return f"{len(kept)} bank row(s) with this difference, fewer than 2"
    if kept.var(ddof=1) <= 0:
        return "its bank rows' differences do not vary"
    return Pilot(float(kept.var(ddof=1)) / 2, 0.0, 1.0)
