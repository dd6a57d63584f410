"""Paired comparisons of the models of one effects study: for every contrast (each level against its
reference, each intervention against the baseline, per target outcome), each pair of models' difference
with an interval clustered by scenario and paired by the scenarios both answered, BH-FDR across all of
them (spec_audits/stats/paired.py) -> comparisons.csv and summary.json's `comparisons`."""

from __future__ import annotations

from typing import Any

import numpy as np

from spec_audits.families.effects.score.frame import Loaded, targets, values_array
from spec_audits.sdk import Estimate, compare_models, contrast_influence, ties


def statistic_name(target: str | None, column: str, level: str, reference: str) -> str:
    """How plans and comparisons name a contrast, e.g. `P(yes): age=a20 vs a60`."""
    what = "mean value" if target is None else f"P({target})"
    return f"{what}: {column}={level} vs {reference}"


def model_comparisons(loaded: list[Loaded], pairs: list[tuple[str, str, str]], alpha: float) -> dict[str, Any]:
    """Every pair of models on every contrast (`pairs`: column, level, reference); the rows and the ties."""
    scenarios = sorted({str(s) for run in loaded for s in run.frame["scenario"]})
    codes = {name: code for code, name in enumerate(scenarios)}
    estimates: dict[str, dict[str, Estimate]] = {}
    for model, run in ((whole.model, block) for whole in loaded for block in whole.blocks()):  # designs apart
        design = f"[{run.design}] " if run.design else ""
        clusters = run.frame["scenario"].astype(str).map(codes).to_numpy(dtype=np.int64)
        for target in targets(run.analysis):
            y = values_array(run.frame, target)
            for column, level, reference in pairs:
                cells = run.frame[column].astype(str).to_numpy()
                estimates.setdefault(model, {})[design + statistic_name(target, column, level, reference)] = \
                    contrast_influence(y, cells == level, cells == reference, clusters, len(scenarios))
    rows = compare_models(estimates, alpha)
    return {"alpha": alpha, "rows": rows, "ties": ties(rows)}
