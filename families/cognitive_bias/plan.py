"""`spec plan` for conditional-bias designs: how Table 1's effects' variances are computed
(spec_audits/stats/power.py).

Δn (presence: |m_n| - |m∅|), δ (content: |m_b| - |m_n|) and Δb (total: |m_b| - |m∅|) are each the mean
of one difference per bank row, tested with a one-sample t over the rows (docs/cognitive-bias.md), so the
bank rows are the clusters, N of them, with N - 1 degrees of freedom. In power.py's two-arm form that is
n1 = n0 = N, one answer of each arm per row (no design effect: the icc does not enter), and a unit variance
of half the per-row difference's variance: var(d) / N = (var(d) / 2) (1/N + 1/N). |m| lies in [0, 1], so a
difference varies by at most 1 ((max - min)^2 / 4 over [-1, 1]): the unit variance is 1/2. This family reads
no pilot yet: the variances are always the largest possible, as the plan's output states.
"""

from __future__ import annotations

from pathlib import Path

from spec_audits.families.cognitive_bias.score.compare import NAMES
from spec_audits.sdk import Suite, Variance


def variances(suite: Suite, pilot: Path | None, icc: float) -> list[Variance]:
    source = "assumed: per-row difference variance at its largest (1), one difference per bank row" + \
        (f" (the pilot {pilot} is not read by this family)" if pilot is not None else "")
    rows = len({(row.unit, (row.meta or {}).get("bank_row")) for row in suite.rows
                if (row.meta or {}).get("bank_row") is not None})
    return [Variance(name, rows, rows, rows, 0.5, icc, source) for name in NAMES.values()]
