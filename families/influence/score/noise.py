"""Noise floor from baseline-replicate runs (methods §6.15, App. N, Tab. 19).

A replicate re-issues an original run's baseline prompts (same suite, same item ids) with fresh sampling
(`spec run --replicate N --only condition=baseline`). Each replicate is paired with the scored run of the
same benchmark, model and reasoning setting; a replicate without one is an error, never a silently missing
floor. Per noise cell (every condition key but the influence: model × factor, plus benchmark and extra keys):

  drift = |f0_rep − f0_orig| over the baseline items answered in both runs, where f0 is
          `paper`:   the share choosing group B (App. N's "f_0(B)"), or
          `release`: the share choosing the second option of each comparison's key, as the release's
                     analysis computes it (triage: the larger group, on equal sizes the level whose name
                     sorts later; item designs: the item's second option as its data row lists them);
  modal flip rate = share of items whose majority choice differs between the runs; an item is a prompt
          (`prompt`: one comparison in one display order) or, as the release counts it, a comparison
          pooled over both display orders (`comparison`). Ties on either side are left out.

Per benchmark the floor holds the mean and max |drift| over cells, the mean flip rate, the same means per
model (Tab. 19's rows) and the per-cell table.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import pandas as pd

from spec_audits.families.influence.score.flips import ITEM_COLUMNS
from spec_audits.families.influence.score.runs import Run
from spec_audits.sdk import RESULTS_FILE, RUN_FILE, ScoreInputError, id_keys, read_results, read_run

F0 = ("paper", "release")
FLIP_UNITS = ("prompt", "comparison")


@dataclass(frozen=True)
class NoiseOptions:
    f0: Literal["paper", "release"] = "paper"
    flips: Literal["prompt", "comparison"] = "prompt"


def _identity(run: Run) -> tuple[str, ...]:
    """(benchmark, model, reasoning setting) of a run: what pairs a replicate with its original."""
    first: pd.Series | dict[str, Any] = run.trials.iloc[0] if len(run.trials) else {}
    return tuple(str(first.get(k, "none")) for k in ("benchmark", "model", "reasoning"))


def pair_replicates(originals: list[Run], replicates: list[Run]) -> list[tuple[Run, Run]]:
    """Each replicate with the scored run it repeats; ScoreInputError when it has none or is no replicate."""
    pairs = []
    for rep in replicates:
        match = [run for run in originals if _identity(run) == _identity(rep)]
        if not match:
            benchmark, model, reasoning = _identity(rep)
            raise ScoreInputError(rep.run_dir / RUN_FILE, f"is a baseline replicate of {model} on {benchmark} "
                                  f"(reasoning {reasoning}), but no run given to score answers that: score the "
                                  "original run with it, e.g. spec score ORIGINAL --noise REPLICATE")
        original = match[0]
        if original.run_dir.resolve() == rep.run_dir.resolve():
            raise ScoreInputError(rep.run_dir / RUN_FILE, "is the scored run itself, not a replicate of it: its "
                                  "drift would be zero by construction; give the replicate's folder, made with "
                                  "spec run --replicate 1 --only condition=baseline")
        if original.info.suite_manifest_sha256 != rep.info.suite_manifest_sha256:
            raise ScoreInputError(rep.run_dir / RUN_FILE, f"was run on another suite than {original.run_dir}: a "
                                  "replicate re-issues the original's prompts, so run it on the same suite")
        _check_fresh(rep)
        pairs.append((original, rep))
    return pairs


def _check_fresh(rep: Run) -> None:
    """A replicate whose answers came from the response cache repeats the original's answers: no noise."""
    if rep.info.settings.get("replicate"):
        return
    rows = read_results(rep.run_dir / RESULTS_FILE)
    cached = sum(row.cached for row in rows)
    if cached:
        raise ScoreInputError(rep.run_dir / RESULTS_FILE, f"{cached} of {len(rows)} answers came from the response "
                              "cache, i.e. are the original run's answers replayed; run the replicate with "
                              "spec run --replicate 1 --only condition=baseline")


def noise_floor(pairs: list[tuple[Run, Run]], options: NoiseOptions = NoiseOptions()) -> dict[str, Any]:
    """Per benchmark: mean and max |drift| (p), mean modal flip rate, per-model means and the per-cell table."""
    cells = pd.concat([_cells(original, rep, options) for original, rep in pairs], ignore_index=True)
    out = {}
    for benchmark, group in cells.groupby("benchmark", sort=True):
        keys = [c for c in group.columns if c not in ("items", "drift_pp", "flip_rate", "f0", "f0_rep")]
        by_model = {str(model): {"cells": len(sub), "mean_abs_drift_pp": float(sub["drift_pp"].mean()),
                                 "mean_flip_rate": _mean(sub["flip_rate"])}
                    for model, sub in group.groupby("model", sort=True)}
        out[str(benchmark)] = {
            "f0": options.f0, "flips": options.flips, "cells": len(group),
            "mean_abs_drift_pp": float(group["drift_pp"].mean()), "max_abs_drift_pp": float(group["drift_pp"].max()),
            "mean_flip_rate": _mean(group["flip_rate"]), "by_model": by_model,
            "per_cell": group[keys + ["items", "f0", "f0_rep", "drift_pp", "flip_rate"]].to_dict("records"),
        }
    return out


def _mean(values: pd.Series) -> float | None:
    """The mean of the cells that have a flip rate (None when every item of every cell tied)."""
    return float(values.mean()) if values.notna().any() else None


def _cells(original: Run, rep: Run, options: NoiseOptions) -> pd.DataFrame:
    """One row per noise cell of one (original, replicate) pair."""
    keys = [k for k in original.keys if k != "influence"]
    base = original.trials[original.trials["condition"] == "baseline"]
    again = rep.trials[rep.trials["condition"] == "baseline"][["item_id", "w_A", "w_B"]]
    joint = base.merge(again, on="item_id", how="inner", suffixes=("", "_rep"))
    if joint.empty:
        raise ScoreInputError(rep.run_dir / RESULTS_FILE, f"answers none of the baseline items {original.run_dir} "
                              "answered: a replicate re-issues the original's baseline prompts")
    second_b = _second_is_b(original, joint) if options.f0 == "release" else np.ones(len(joint), bool)
    for suffix in ("", "_rep"):
        joint["w_2" + suffix] = np.where(second_b, joint["w_B" + suffix], joint["w_A" + suffix])
    sums = joint.groupby(keys, dropna=False)[["w_A", "w_B", "w_2", "w_A_rep", "w_B_rep", "w_2_rep"]].sum()
    with np.errstate(invalid="ignore", divide="ignore"):
        f0 = sums["w_2"] / (sums["w_A"] + sums["w_B"])
        f0_rep = sums["w_2_rep"] / (sums["w_A_rep"] + sums["w_B_rep"])
    flips = _flips(joint, keys, options.flips)
    table = pd.DataFrame({"f0": f0, "f0_rep": f0_rep, "drift_pp": 100 * (f0_rep - f0).abs()}).join(flips)
    return table.reset_index()


def _flips(joint: pd.DataFrame, keys: list[str], unit: str) -> pd.DataFrame:
    """Per cell: items compared and the share whose majority flipped (ties on either side left out)."""
    if unit == "comparison":
        coords = ["influence", *(c for c in ITEM_COLUMNS if c in joint.columns)]
        joint = joint.groupby([*keys, *coords], dropna=False)[["w_A", "w_B", "w_A_rep", "w_B_rep"]].sum().reset_index()
    mode, mode_rep = np.sign(joint["w_B"] - joint["w_A"]), np.sign(joint["w_B_rep"] - joint["w_A_rep"])
    flip = np.where((mode != 0) & (mode_rep != 0), (mode != mode_rep).astype(float), np.nan)
    return joint.assign(flip=flip).groupby(keys, dropna=False).agg(items=("flip", "size"),
                                                                  flip_rate=("flip", "mean"))


def _second_is_b(run: Run, joint: pd.DataFrame) -> np.ndarray:
    """Whether each baseline item's key-second option (the release's f0) is group B."""
    suite = read_run(run.run_dir)[1].rows
    rows = dict(zip(id_keys([row.id for row in suite])[0].tolist(), suite, strict=True))  # trials' item_id
    return np.array([_key_second(rows[item_id].cell, rows[item_id].answers) == rows[item_id].cell["group_B"]
                     for item_id in joint["item_id"].tolist()])


def _key_second(cell: dict[str, Any], answers: dict[str, str]) -> str:
    """The group the release's comparison key lists second: a size pair's larger group (its edges put the
    smaller N first, and on equal sizes the levels in sorted order); an item's second option as its data
    lists them (its display order AB shows the data's order)."""
    group_a, group_b = str(cell["group_A"]), str(cell["group_B"])
    if cell.get("n_A") is not None:
        n_a, n_b = int(cell["n_A"]), int(cell["n_B"])
        return group_b if n_b > n_a or (n_a == n_b and group_b > group_a) else group_a
    return list(answers.values())[str(cell["order"]).index("B")]
