"""`spec plan` for effects designs: how each contrast's variance is computed (spec_audits/stats/power.py).

Each contrast (a level against its factor's reference, an intervention against the baseline, per target
outcome) is a difference of two arms' mean answers clustered by scenario. The suite gives the answers per
arm (a row's samples in sampled mode, one exact probability per row in logprob mode) and the scenarios; a
pilot run of the suite gives each contrast's answer variance and intra-cluster correlation. Without a pilot
(or where it cannot tell: too few answers in an arm or scenarios, and the plan says why) the answer
variance is its largest possible value, p(1 - p) at p = 0.5 for a probability and (max - min)^2 / 4 for a value, and the
intra-cluster correlation the assumed one."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from spec_audits.families.effects.score.compare import statistic_name
from spec_audits.families.effects.score.frame import Loaded, of_design, targets, values_array
from spec_audits.families.effects.score.pipeline import comparisons
from spec_audits.families.effects.score.read import load
from spec_audits.sdk import PER_DESIGN, PILOT, Assumed, Suite, Variance, from_pilot, pilot_spread


def variances(suite: Suite, pilot: Path | None, icc: float) -> list[Variance]:
    """Every contrast's variance; designs asking in different answer forms each apart (`[DESIGN] ...`)."""
    analysis: dict[str, Any] = suite.manifest.analysis or {}
    cells = pd.DataFrame([row.cell for row in suite.rows])
    cells["answers"] = [1 if suite.manifest.mode == "logprob" else row.samples for row in suite.rows]
    loaded = load(pilot) if pilot is not None else None
    if PER_DESIGN not in analysis:
        return _design_variances(cells, loaded, pilot, analysis, icc, "")
    pilots = {block.design: block for block in loaded.blocks()} if loaded is not None else {}
    found = []
    for design in analysis[PER_DESIGN]:
        found += _design_variances(cells[cells["design"] == design], pilots.get(design), pilot,
                                   of_design(analysis, design), icc, f"[{design}] ")
    return found


def _design_variances(cells: pd.DataFrame, loaded: Loaded | None, pilot: Path | None, analysis: dict[str, Any],
                      icc: float, label: str) -> list[Variance]:
    found = []
    for target in targets(analysis):
        for column, level, reference in comparisons(analysis):
            arms = cells[cells[column].astype(str).isin([level, reference])]
            n = Counter(dict(arms.groupby(arms[column].astype(str))["answers"].sum()))
            name = label + statistic_name(target, column, level, reference)
            unit_var, rho, source = _spread(loaded, pilot, target, (column, level, reference), analysis, icc)
            found.append(Variance(name, int(n[level]), int(n[reference]), int(arms["scenario"].nunique()),
                                  unit_var, rho, source, measured=source.startswith(PILOT)))
    return found


def _spread(loaded: Loaded | None, pilot: Path | None, target: str | None, pair: tuple[str, str, str],
            analysis: dict[str, Any], icc: float) -> tuple[float, float, str]:
    """(unit variance, icc, where they come from) of one contrast."""
    assumed = Assumed(_largest(target, analysis), icc, f"assumed: answer variance at its largest, icc {icc:g}")
    if loaded is None:
        return pilot_spread(None, pilot, 0, assumed)
    column, level, reference = pair
    frame = loaded.frame
    keep = frame[column].astype(str).isin([level, reference]).to_numpy()
    at_level = frame[column].astype(str).to_numpy()[keep] == level
    scenarios = frame["scenario"].astype(str).to_numpy()[keep]
    clusters = np.unique(scenarios, return_inverse=True)[1].astype(np.int64)
    return pilot_spread(from_pilot(values_array(frame, target)[keep], at_level, clusters), pilot, len(frame),
                        assumed)


def _largest(target: str | None, analysis: dict[str, Any]) -> float:
    """The largest variance one answer can have: 1/4 for a probability, (max - min)^2 / 4 for a value."""
    if target is not None:
        return 0.25
    values = [float(token) for token in analysis["answer"]["tokens"]]
    return (max(values) - min(values)) ** 2 / 4
