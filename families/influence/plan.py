"""`spec plan` for influence designs: how each condition's effects' variances are computed
(spec_audits/stats/power.py).

Each condition (factor x influence) has two effects: P(group A chosen | toward A) - P(group A chosen |
baseline), and the same for B (docs/scoring.md, "Definitions"), each a difference of two arms' mean answers.
The baseline arm is the factor's baseline prompts (shared by its influences, or the influence's own). An
arm's answers are a prompt's samples in sampled mode, one expected choice per prompt in logprob mode; the
clusters are the prompts, whose samples share their wording. A pilot run gives each effect's answer variance
and the correlation between a prompt's samples; without one (or where it cannot tell) the variance is its
largest, 1/4, and the correlation the assumed one. BH runs within the benchmark over both effects of every
condition, so every effect counts as one test.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from spec_audits.families.influence.score.compare import effect_arms, spread_answers
from spec_audits.families.influence.score.runs import load_run
from spec_audits.sdk import PILOT, Assumed, Suite, Variance, from_pilot, pilot_spread


def variances(suite: Suite, pilot: Path | None, icc: float) -> list[Variance]:
    logprob = suite.manifest.mode == "logprob"
    rows = pd.DataFrame([{"influence": None, **row.cell, "answers": 1 if logprob else row.samples}
                         for row in suite.rows])
    answers = _pilot_answers(pilot) if pilot is not None else None
    found = []
    for (factor, influence), _ in rows[rows["condition"] != "baseline"].groupby(["factor", "influence"]):
        base = (rows["condition"] == "baseline") & (rows["factor"] == factor) & \
            (rows["influence"].isna() | (rows["influence"] == influence))
        for side in "AB":
            arm = (rows["condition"] == f"toward_{side}") & (rows["factor"] == factor) & \
                (rows["influence"] == influence)
            name = f"effect toward {side}: {factor} / {influence}"
            unit_var, rho, source = _spread(answers, pilot, (str(factor), str(influence), side), icc)
            found.append(Variance(name, int(rows["answers"][arm].sum()), int(rows["answers"][base].sum()),
                                  int((arm | base).sum()), unit_var, rho, source, arms_per_cluster=1,
                                  measured=source.startswith(PILOT)))
    return found


def _pilot_answers(pilot: Path) -> pd.DataFrame:
    """One row per answer of the pilot, with y: 1 when group A was chosen."""
    run = load_run(pilot)
    return spread_answers(run.trials, run.source)


def _spread(answers: pd.DataFrame | None, pilot: Path | None, key: tuple[str, str, str],
            icc: float) -> tuple[float, float, str]:
    """(unit variance, icc, where they come from) of one effect."""
    assumed = Assumed(0.25, icc, f"assumed: answer variance at its largest (1/4), icc {icc:g} between a prompt's "
                      "samples")
    if answers is None:
        return pilot_spread(None, pilot, 0, assumed)
    arm, base = effect_arms(answers, *key)
    own = answers[arm | base]
    clusters = np.unique(own["item_id"].to_numpy(), return_inverse=True)[1].astype(np.int64)
    return pilot_spread(from_pilot(own["y"].to_numpy(float), arm[arm | base], clusters), pilot, len(answers),
                        assumed)
