"""`spec score` for effects runs, one or several models together: per model and target outcome, the
contrasts of every level against its factor's reference and of every intervention against the baseline
(BH-FDR over them), the regression, the per-scenario shifts and position bias -> contrasts.csv,
regression.csv, scenarios.csv, positions.csv and summary.json; for several models also each pair's paired
difference on every contrast (score/compare.py) -> comparisons.csv."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from spec_audits.families.effects.design import BASELINE
from spec_audits.families.effects.score import models, positions
from spec_audits.families.effects.score.compare import model_comparisons
from spec_audits.families.effects.score.frame import Loaded, targets, values_array
from spec_audits.families.effects.score.read import load
from spec_audits.families.effects.score.stats import contrast
from spec_audits.sdk import (
    PER_DESIGN,
    ScoreInputError,
    bh_adjust,
    require_answers,
    score_folder,
    write_csv_rows,
    write_json,
)


def score_run(run_dir: Path, out: Path, options: dict[str, Any]) -> list[str]:
    return score_runs([run_dir], out, options)


def score_runs(run_dirs: list[Path], out: Path, options: dict[str, Any]) -> list[str]:
    require_answers(run_dirs)
    loaded = [load(run) for run in run_dirs]
    _same_design(loaded, run_dirs)
    analysis = loaded[0].analysis
    summary: dict[str, Any] = {"family": "effects", **{k: analysis[k] for k in ("answer", PER_DESIGN) if k in analysis},
                               "factors": analysis["factors"], "conditions": analysis["conditions"],
                               "crossing": analysis["crossing"], "alpha": analysis["alpha"], "models": {}}
    contrasts, terms, scenarios, placed = [], [], [], []
    for run in (block for whole in loaded for block in whole.blocks()):
        entry = summary["models"].setdefault(run.model, {"mode": run.mode, "answered": len(run.frame),
                                                         "abstained": run.abstained, "failed": run.failed,
                                                         "answer": run.analysis["answer"], "targets": {}})
        entry["position"] = positions.summary(run.frame, run.moved, run.mode, float(analysis["alpha"]))
        placed += positions.table(run.frame, run.model)
        for target in targets(run.analysis):
            found = analyse(run, target)
            entry["targets"][_name(target)] = found
            contrasts += [{"model": run.model, "target": _name(target), **c} for c in found["contrasts"]]
            terms += [{"model": run.model, "target": _name(target), "fit": found["regression"]["model"], **t}
                      for t in found["regression"]["terms"]]
            scenarios += found.pop("scenarios")  # a row per scenario and contrast, as made: no copy of each
    out = score_folder(out)
    if len(loaded) > 1:
        summary["comparisons"] = model_comparisons(loaded, comparisons(analysis), float(analysis["alpha"]))
        write_csv_rows(summary["comparisons"]["rows"], out / "comparisons.csv")
    write_csv_rows(contrasts, out / "contrasts.csv")
    write_csv_rows(terms, out / "regression.csv")
    write_csv_rows(scenarios, out / "scenarios.csv")
    write_csv_rows(placed, out / "positions.csv")
    write_json(out / "summary.json", summary)
    return [f"{sum(len(r.frame) for r in loaded):,} answers of {len(loaded)} model(s) scored: {len(contrasts)} "
            f"contrasts, {len(terms)} regression terms -> {out}"]


def _same_design(loaded: list[Loaded], run_dirs: list[Path]) -> None:
    first = loaded[0].analysis
    for run, path in zip(loaded[1:], run_dirs[1:], strict=True):
        if run.analysis != first:
            raise ScoreInputError(path, f"its suite's design differs from {run_dirs[0]}'s: score runs of one suite "
                                  "together")


def _name(target: str | None) -> str:
    return "value" if target is None else target


def analyse(run: Loaded, target: str | None) -> dict[str, Any]:
    """Contrasts (with BH-FDR), the regression and the per-scenario shifts of one model and target."""
    analysis = run.analysis
    frame = _categorical(run.frame, ["scenario", "condition", *(f["name"] for f in analysis["factors"])])
    y = values_array(frame, target)
    probability = target is not None
    alpha = float(analysis["alpha"])
    found = list(_contrasts(frame, y, analysis, probability, alpha))
    _fdr(found, alpha)
    regression = models.fit(frame, y, analysis, binary=probability, ordinal=analysis["answer"]["kind"] == "scale",
                            mode=run.mode, alpha=alpha)
    return {"contrasts": found, "regression": regression,
            "scenarios": per_scenario(frame, y, analysis, {"model": run.model, "target": _name(target)})}


def _categorical(frame: pd.DataFrame, columns: list[str]) -> pd.DataFrame:
    """`frame` with `columns` categorical: itself where they are (as read), never a copy of a million rows."""
    plain = [name for name in columns if not isinstance(frame[name].dtype, pd.CategoricalDtype)]
    return frame.astype(dict.fromkeys(plain, "category")) if plain else frame


def comparisons(analysis: dict[str, Any]) -> list[tuple[str, str, str]]:
    """(column, level, reference): every non-reference level of every factor, every intervention vs baseline."""
    pairs = [(f["name"], level, f["reference"]) for f in analysis["factors"] for level in f["levels"]
             if level != f["reference"]]
    if BASELINE in analysis["conditions"]:
        pairs += [("condition", c, BASELINE) for c in analysis["conditions"] if c != BASELINE]
    return pairs


def _contrasts(frame: pd.DataFrame, y: np.ndarray, analysis: dict[str, Any], probability: bool,
               alpha: float) -> list[dict[str, Any]]:
    out = []
    scenario = frame["scenario"].cat.codes.to_numpy().astype(np.int64)
    for column, level, reference in comparisons(analysis):
        at_level, at_ref = (frame[column] == level).to_numpy(), (frame[column] == reference).to_numpy()
        keep = at_level | at_ref
        row = {"term": column, "level": level, "reference": reference}
        if not at_level.any() or not at_ref.any():
            out.append({**row, "absent": f"no answers at {'the level' if not at_level.any() else 'the reference'}"})
            continue
        out.append({**row, **contrast(y[keep], at_level[keep], scenario[keep], alpha, probability)})
    return out


def _fdr(found: list[dict[str, Any]], alpha: float) -> None:
    """BH q-values over the contrasts that have a p-value; the others stay absent."""
    tested = [c for c in found if c.get("p") is not None and np.isfinite(c["p"])]
    if not tested:
        return
    q = bh_adjust(np.array([c["p"] for c in tested]))
    for c, q_value in zip(tested, q, strict=True):
        c["q"], c["significant"] = float(q_value), bool(q_value <= alpha)


def per_scenario(frame: pd.DataFrame, y: np.ndarray, analysis: dict[str, Any],
                 labels: dict[str, str]) -> list[dict[str, Any]]:
    """Per scenario, each level's mean minus its reference's mean (no interval: a scenario is one cluster), each
    row's first columns `labels` (the model and target)."""
    rows = []
    for column, level, reference in comparisons(analysis):
        kept = frame[column].isin([level, reference]).to_numpy()  # a frame of the three columns read, not a copy of all
        work = pd.DataFrame({"scenario": frame["scenario"][kept], column: frame[column][kept], "_y": y[kept]})
        means = work.groupby(["scenario", column], observed=True)["_y"].mean()
        table = means.unstack(column)
        if level not in table or reference not in table:
            continue
        shift = (table[level] - table[reference]).dropna()
        rows += [{**labels, "scenario": s, "term": column, "level": level, "reference": reference, "shift": float(v)}
                 for s, v in shift.items()]
    return rows
