"""`spec score` on a conditional-bias run: rows.csv (one per model x bank row), effects.csv (Table 1),
cells_{presence,content,total}.csv (the released per-cell schema, a `model` column first when the run
has several models), lmm.csv (the release's per-target-bias mixed model, likewise), diagonal.json,
causal.csv (DiD both variants), scm.csv, psm.json, abstention.csv, summary.json, and the plots
(heatmaps.png, causal.png)."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pandas as pd

from families.cognitive_bias.score.causal import psm, scm
from families.cognitive_bias.score.did import did
from families.cognitive_bias.score.lmm import lmm_table
from families.cognitive_bias.score.load import BiasRun, load_bias_run
from families.cognitive_bias.score.plots import plot_causal, plot_heatmaps
from families.cognitive_bias.score.tables import EFFECTS, cells, diagonal_test, table1


def score(run_dir: Path, out: Path, options: dict[str, Any]) -> list[str]:
    """`spec score` on a conditional-bias run (the family reads no options)."""
    summary = score_run(load_bias_run(run_dir), out)
    return [f"{summary['bank_rows']} bank rows scored ({len(summary['models'])} model(s)) -> {out}"]


def score_run(run: BiasRun, out: Path) -> dict[str, Any]:
    out.mkdir(parents=True, exist_ok=True)
    rows, analysis = run.rows, run.analysis
    order = list(analysis["matrix_order"])
    models = sorted(rows["model"].unique())
    rows.to_csv(out / "rows.csv", index=False)
    table1(rows).to_csv(out / "effects.csv", index=False)
    run.abstentions.to_csv(out / "abstention.csv", index=False)
    per_model = {m: rows[rows["model"] == m] for m in models}
    tables = {effect: pd.concat([cells(g, effect, order).assign(model=m) for m, g in per_model.items()])
              for effect in EFFECTS}
    for effect, table in tables.items():
        _per_model_csv(table, len(models), out / f"cells_{effect}.csv")
    mixed = pd.concat([lmm_table(g, order).assign(model=m) for m, g in per_model.items()])
    _per_model_csv(mixed, len(models), out / "lmm.csv")
    causal = pd.DataFrame([{"model": m, "variant": v, **_did(g, v)} for m, g in per_model.items()
                           for v in ("abs", "authors")])
    causal.to_csv(out / "causal.csv", index=False)
    scm_table = pd.concat([scm(g, list(analysis.get("scm_covariates", [])), order).assign(model=m)
                           for m, g in per_model.items()])
    scm_table.to_csv(out / "scm.csv", index=False)
    matching = {m: psm(g, list(analysis.get("psm_covariates", []))) for m, g in per_model.items()}
    diagonal = {m: diagonal_test(g) for m, g in per_model.items()}
    _write_json(out / "psm.json", matching)
    _write_json(out / "diagonal.json", diagonal)
    plot_heatmaps(tables, models[0], order, out / "heatmaps.png")
    plot_causal(causal, scm_table, out / "causal.png")
    summary = {"family": "bias_decomposition", "suite": run.manifest.suite, "models": models,
               "bank_rows": int(len(rows)), "failed": run.failed, "matrix_order": order,
               "did_default": analysis.get("did", "abs")}
    _write_json(out / "summary.json", summary)
    return summary


def _per_model_csv(table: pd.DataFrame, models: int, path: Path) -> None:
    """The released schema, with a `model` column first when the run has several models."""
    columns = (["model"] if models > 1 else []) + [c for c in table.columns if c != "model"]
    table[columns].to_csv(path, index=False)


def _did(rows: pd.DataFrame, variant: str) -> dict[str, float]:
    complete = rows.dropna(subset=["m_zero_shot", "m_neutral_turn", "m_biased_turn"])
    if len(complete) < 2 or complete["unit"].nunique() < 2:
        return {"att": math.nan, "se": math.nan, "ci_low": math.nan, "ci_high": math.nan, "n_rows": len(complete)}
    return did(complete, variant)


def _write_json(path: Path, value: Any) -> None:
    text = json.dumps(value, indent=2, sort_keys=True, allow_nan=True, default=float)
    path.write_text(text.replace("NaN", "null") + "\n", encoding="utf-8")
