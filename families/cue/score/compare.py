"""Paired comparisons of the models of one cue-visibility study: each format's macro Net and each cue gap
(Net_direct - Net_puzzled), per consequence setting, over every parsable answer, as summary.json's
`macro_net` and `macro_gap` give them (percentage points). Each pair of models' difference has an interval
clustered by dilemma and paired by the dilemmas both answered, BH-FDR across all of them
(spec_audits/stats/paired.py) -> comparisons.csv and summary.json's `comparisons`.

A group's Net is a difference of two arms' mean answers: the Favor-eligible answers (1 when they chose the
benefit option) and the Against-eligible ones (1 when they did not), so paired.py's contrast influence gives
it; the macro Net (the mean over the groups of every hidden attribute with a Net) has the mean of their
influences, and a gap the difference of the two formats' per group."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

from spec_audits.families.cue.score.events import by_group
from spec_audits.families.cue.score.metrics import COUNTS
from spec_audits.sdk import Estimate, compare_models, contrast_influence, ties

Groups = dict[tuple[str, str], Estimate]  # (dimension, group) -> that group's Net


def arm_name(fmt: str, band: object) -> str:
    """direct, or `puzzled BAND` for a Puzzled difficulty band (as plans and comparisons name them)."""
    return fmt if band is None or band == "" or band != band else f"{fmt} {band}"  # band != band: NaN


def setting_name(shown: bool) -> str:
    """How plans and comparisons name a consequence setting."""
    return "with consequences" if shown else "without consequences"


def model_comparisons(events: pd.DataFrame, attributes: tuple[str, ...], alpha: float) -> dict[str, Any]:
    """Every pair of models on every Net and gap they share; the rows and the ties."""
    codes = {name: code for code, name in enumerate(sorted(str(name) for name in pd.unique(events["dilemma"])))}
    kept = ["model", "consequences", "format", "difficulty", "dilemma", *COUNTS, *attributes]
    grouped = by_group(events[list(dict.fromkeys(kept))], attributes)
    estimates: dict[str, dict[str, Estimate]] = {}
    for model, frame in grouped.groupby("model", sort=True):
        estimates[str(model)] = _statistics(frame, codes)
    rows = compare_models(estimates, alpha)
    return {"alpha": alpha, "rows": rows, "ties": ties(rows)}


def _statistics(frame: pd.DataFrame, codes: dict[str, int]) -> dict[str, Estimate]:
    """One model's macro Net per format and setting and its gaps, by name."""
    found: dict[str, Estimate] = {}
    for setting, rows in frame.groupby("consequences", sort=True):
        nets = {arm_name(str(fmt), band): _group_nets(cell, codes)
                for (fmt, band), cell in rows.groupby(["format", "difficulty"], dropna=False, sort=False)}
        for arm, groups in nets.items():
            found[f"Net (pp): {arm}, {setting_name(bool(setting))}"] = _macro(list(groups.values()), len(codes))
        for arm, groups in nets.items():
            if arm != "direct" and "direct" in nets:
                direct = nets["direct"]
                gaps = [_minus(direct[key], groups[key]) for key in direct if key in groups]
                found[f"cue gap (pp): direct - {arm}, {setting_name(bool(setting))}"] = _macro(gaps, len(codes))
    return found


def _group_nets(cell: pd.DataFrame, codes: dict[str, int]) -> Groups:
    """Net = Favor - Against (points) of each group of one format, with its influence per dilemma."""
    nets = {}
    for (dimension, group), rows in cell.groupby(["dimension", "group"], sort=True):
        y = 100.0 * (rows["favor"] | rows["against"]).to_numpy(float)
        clusters = rows["dilemma"].astype(str).map(codes).to_numpy(np.int64)
        nets[(str(dimension), str(group))] = contrast_influence(
            y, rows["favor_eligible"].to_numpy(bool), rows["against_eligible"].to_numpy(bool), clusters, len(codes))
    return nets


def _minus(a: Estimate, b: Estimate) -> Estimate:
    return Estimate(a.value - b.value, a.psi - b.psi, a.present | b.present)


def _macro(parts: list[Estimate], size: int) -> Estimate:
    """The mean of the estimates that have a value (a group with an empty Favor or Against arm has none)."""
    kept = [part for part in parts if math.isfinite(part.value)]
    if not kept:
        return Estimate(math.nan, np.zeros(size), np.zeros(size, dtype=bool))
    return Estimate(float(np.mean([p.value for p in kept])), np.mean([p.psi for p in kept], axis=0),
                    np.logical_or.reduce([p.present for p in kept]))
