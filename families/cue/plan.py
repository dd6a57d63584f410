"""`spec plan` for cue-visibility designs: how the Net of each format and the cue gaps' variances are
computed (spec_audits/stats/power.py), in percentage points as scored (`--effect 5` is 5 points), per
consequence setting.

Net = Favor - Against (docs/puzzles.md) is a difference of two arms of a format's what-if answers: those
whose Neutral baseline did not pick the benefit option (Favor's, 100 when they picked it) and those whose
baseline did (Against's, 100 when they did not). Which arm a dilemma's answers fall in is set by its
baseline, so each dilemma (the cluster) is in one arm; before a run the split is unknown and planned as half
and half. The cue gap Net_direct - Net_puzzled is a difference of the Direct and a Puzzled band's answers,
every dilemma asked in both: one answer's contribution to a Net varies by at most 100 points (a value
between -100 and 100), so its unit variance is 4 times a Net arm's (100^2 against 50^2 at the largest).
Without a pilot the variances are the largest and the intra-cluster correlation the assumed one. A pilot
run gives each Net's pooled within-arm variance and icc between a dilemma's answers (`from_pilot` over its
directional events, the groups pooled), and each gap 4 times the mean of its two Nets' variances and the
mean of their iccs; where it cannot tell (an arm with fewer than two answers, one dilemma, no variation)
the plan keeps the largest and says why.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from spec_audits.families.cue.score.compare import arm_name, setting_name
from spec_audits.families.cue.score.events import directional_events
from spec_audits.families.cue.score.load import load_cue_run
from spec_audits.sdk import PILOT, Assumed, Suite, Variance, from_pilot, pilot_spread

Spreads = dict[str, tuple[float, float, str]]  # a Net's arm name -> (unit variance, icc, source)


def variances(suite: Suite, pilot: Path | None, icc: float) -> list[Variance]:
    cells = pd.DataFrame([{**row.cell, "answers": row.samples} for row in suite.rows])
    asked = cells[(cells["format"] != "neutral") & (cells["probe"] == "what_if")]
    events = directional_events(load_cue_run(pilot).frame) if pilot is not None else None
    found = []
    for setting, rows in asked.groupby("consequences", sort=True):
        arms = {arm_name(str(fmt), band): frame
                for (fmt, band), frame in rows.groupby(["format", "difficulty"], dropna=False, sort=False)}
        shown = setting == "with"
        spreads = {arm: _net_spread(events, pilot, arm, shown, icc) for arm in arms}
        found += _statistics(arms, setting_name(shown), spreads)
    return found


def _net_spread(events: pd.DataFrame | None, pilot: Path | None, arm: str, shown: bool,
                icc: float) -> tuple[float, float, str]:
    """(unit variance, icc, where they come from) of one format's Net in one setting, in points."""
    assumed = Assumed(50.0 ** 2, icc, f"assumed: answer variance at its largest, icc {icc:g} between a dilemma's "
                      "answers")
    if events is None:
        return pilot_spread(None, pilot, 0, assumed)
    names = [arm_name(str(fmt), band) for fmt, band in zip(events["format"], events["difficulty"], strict=True)]
    own = events[(np.array(names, dtype=object) == arm) & (events["consequences"] == shown).to_numpy()]
    y = 100.0 * (own["favor"] | own["against"]).to_numpy(float)
    clusters = np.unique(own["dilemma"].to_numpy(str), return_inverse=True)[1].astype(np.int64)
    return pilot_spread(from_pilot(y, own["favor_eligible"].to_numpy(bool), clusters), pilot, len(events), assumed)


def _gap_spread(direct: tuple[float, float, str], band: tuple[float, float, str]) -> tuple[float, float, str]:
    """A gap's spread from its two Nets': 4 times their mean unit variance and their mean icc, measured only
    where both are (else the largest, 100^2, with the reason the Net that could not tell gives)."""
    if direct[2].startswith(PILOT) and band[2].startswith(PILOT):
        return 2 * (direct[0] + band[0]), (direct[1] + band[1]) / 2, direct[2]
    fallen = band if direct[2].startswith(PILOT) else direct
    return 100.0 ** 2, fallen[1], fallen[2]


def _statistics(arms: dict[str, pd.DataFrame], setting: str, spreads: Spreads) -> list[Variance]:
    """Each arm's Net and each Puzzled band's gap to Direct, in one consequence setting."""
    found = []
    for arm, frame in arms.items():
        n = int(frame["answers"].sum())
        unit_var, rho, source = spreads[arm]
        found.append(Variance(f"Net (pp): {arm}, {setting}", n // 2, n - n // 2, int(frame["dilemma"].nunique()),
                              unit_var, rho, source, arms_per_cluster=1, measured=source.startswith(PILOT)))
    direct = arms.get("direct")
    for arm, frame in arms.items():
        if direct is not None and arm != "direct":
            both = pd.concat([direct, frame])
            unit_var, rho, source = _gap_spread(spreads["direct"], spreads[arm])
            found.append(Variance(f"cue gap (pp): direct - {arm}, {setting}", int(direct["answers"].sum()),
                                  int(frame["answers"].sum()), int(both["dilemma"].nunique()), unit_var, rho,
                                  source, measured=source.startswith(PILOT)))
    return found
