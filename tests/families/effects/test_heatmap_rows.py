"""The per-scenario heatmap draws at most HEATMAP_ROWS scenarios, those of the largest mean |shift|, and its
title says so: a figure of one row per scenario grew with the design (issue 34: a million-row design has
thousands of scenarios, a figure taller than matplotlib draws)."""

from __future__ import annotations

import pandas as pd

from spec_audits.families.effects import plots
from spec_audits.families.effects.plots import HEATMAP_ROWS


def _shifts(count: int) -> pd.DataFrame:
    """Two contrasts per scenario; scenario i's shifts are i and -i, so the largest are the last."""
    return pd.DataFrame([{"scenario": f"s{i}", "label": label, "shift": sign * float(i)}
                         for i in range(count) for label, sign in (("age", 1), ("gender", -1))])


def test_many_scenarios_draw_those_of_the_largest_shifts() -> None:
    kept, title = plots._largest(_shifts(HEATMAP_ROWS + 40), "m: shift")
    drawn = sorted(kept["scenario"].unique(), key=lambda s: int(s[1:]))
    assert drawn == [f"s{i}" for i in range(40, HEATMAP_ROWS + 40)]
    assert title == f"m: shift: the {HEATMAP_ROWS} of {HEATMAP_ROWS + 40} scenarios of the largest mean |shift|"


def test_few_scenarios_are_all_drawn_under_their_own_title() -> None:
    shifts = _shifts(HEATMAP_ROWS)
    kept, title = plots._largest(shifts, "m: shift")
    assert kept is shifts and title == "m: shift"
