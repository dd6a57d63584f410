"""`spec plan` for cue-visibility designs: how the Net of each format and the cue gaps' variances are
computed (spec_audits/stats/power.py), in percentage points as scored (`--effect 5` is 5 points), per
consequence setting.

Net = Favor - Against (docs/puzzles.md) is a difference of two arms of a format's what-if answers: those
whose Neutral baseline did not pick the benefit option (Favor's) and those whose baseline did (Against's).
Which arm a dilemma's answers fall in is set by its baseline, so each dilemma (the cluster) is in one arm;
before a run the split is unknown and planned as half and half. The cue gap Net_direct - Net_puzzled is a
difference of the Direct and a Puzzled band's answers, every dilemma asked in both; one answer's
contribution to a Net varies by at most 100 points (a value between -100 and 100), so its unit variance is
100^2 (the Net's own 50^2 per arm, twice). This family reads no pilot yet: the variances are always the
largest possible and the intra-cluster correlation the assumed one, as the plan's output states.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from spec_audits.families.cue.score.compare import arm_name, setting_name
from spec_audits.sdk import Suite, Variance


def variances(suite: Suite, pilot: Path | None, icc: float) -> list[Variance]:
    source = f"assumed: answer variance at its largest, icc {icc:g} between a dilemma's answers" + \
        (f" (the pilot {pilot} is not read by this family)" if pilot is not None else "")
    cells = pd.DataFrame([{**row.cell, "answers": row.samples} for row in suite.rows])
    asked = cells[(cells["format"] != "neutral") & (cells["probe"] == "what_if")]
    found = []
    for setting, rows in asked.groupby("consequences", sort=True):
        arms = {arm_name(str(fmt), band): frame
                for (fmt, band), frame in rows.groupby(["format", "difficulty"], dropna=False, sort=False)}
        found += _statistics(arms, setting_name(setting == "with"), icc, source)
    return found


def _statistics(arms: dict[str, pd.DataFrame], setting: str, icc: float, source: str) -> list[Variance]:
    """Each arm's Net and each Puzzled band's gap to Direct, in one consequence setting."""
    found = []
    for arm, frame in arms.items():
        n = int(frame["answers"].sum())
        found.append(Variance(f"Net (pp): {arm}, {setting}", n // 2, n - n // 2, int(frame["dilemma"].nunique()),
                              50.0 ** 2, icc, source, arms_per_cluster=1))
    direct = arms.get("direct")
    for arm, frame in arms.items():
        if direct is not None and arm != "direct":
            both = pd.concat([direct, frame])
            found.append(Variance(f"cue gap (pp): direct - {arm}, {setting}", int(direct["answers"].sum()),
                                  int(frame["answers"].sum()), int(both["dilemma"].nunique()), 100.0 ** 2, icc,
                                  source))
    return found

