"""`spec score` on a conditional-bias run: rows.csv (one per model x bank row), effects.csv (Table 1),
cells_{presence,content,total}.csv (the released per-cell schema, a `model` column first when the run
has several models), lmm.csv (the release's per-target-bias mixed model, likewise), diagonal.json,
causal.csv (DiD both variants), scm.csv, psm.json, abstention.csv, positions.csv (first-shown answers
per item and order), summary.json, and the plots (heatmaps.png, causal.png); with several models also
comparisons.csv, their paired differences on Table 1's effects (compare.py)."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pandas as pd

from spec_audits.families.cognitive_bias.score import position
from spec_audits.families.cognitive_bias.score.causal import psm, scm
from spec_audits.families.cognitive_bias.score.compare import model_comparisons
from spec_audits.families.cognitive_bias.score.did import did
from spec_audits.families.cognitive_bias.score.lmm import lmm_table
from spec_audits.families.cognitive_bias.score.load import BiasRun, load_bias_run, load_bias_runs
from spec_audits.families.cognitive_bias.score.plots import plot_causal, plot_heatmaps
from spec_audits.families.cognitive_bias.score.tables import EFFECTS, cells, diagonal_test, table1
from spec_audits.sdk import score_folder, write_csv, write_json

ALPHA = 0.05  # the paired model comparisons' level and BH false discovery rate (the family reads no options)


def score(run_dir: Path, out: Path, options: dict[str, Any]) -> list[str]:
    """`spec score` on a conditional-bias run (the family reads no options)."""
    summary = score_run(load_bias_run(run_dir), out)
    return [f"{summary['bank_rows']} bank rows scored ({len(summary['models'])} model(s)) -> {out}"]


def score_runs(run_dirs: list[Path], out: Path, options: dict[str, Any]) -> list[str]:
    """`spec score` on several runs of one conditional-bias suite (a study): their models compared."""
    summary = score_run(load_bias_runs(run_dirs), out)
    return [f"{summary['bank_rows']} bank rows scored ({len(summary['models'])} model(s)) -> {out}"]


def score_run(run: BiasRun, out: Path) -> dict[str, Any]:
    score_folder(out)
    rows, analysis = run.rows, run.analysis
    order = list(analysis["matrix_order"])
    models = sorted(rows["model"].unique())
    write_csv(rows, out / "rows.csv")
    write_csv(table1(rows), out / "effects.csv")
    write_csv(run.abstentions, out / "abstention.csv")
    write_csv(position.item_table(run.answers), out / "positions.csv")
    per_model = {m: rows[rows["model"] == m] for m in models}
    tables = {effect: pd.concat([cells(g, effect, order).assign(model=m) for m, g in per_model.items()])
              for effect in EFFECTS}
    for effect, table in tables.items():
        _per_model_csv(table, len(models), out / f"cells_{effect}.csv")
    mixed = pd.concat([lmm_table(g, order).assign(model=m) for m, g in per_model.items()])
    _per_model_csv(mixed, len(models), out / "lmm.csv")
    causal = pd.DataFrame([{"model": m, "variant": v, **_did(g, v)} for m, g in per_model.items()
                           for v in ("abs", "authors")])
    write_csv(causal, out / "causal.csv")
    scm_table = pd.concat([scm(g, list(analysis.get("scm_covariates", [])), order).assign(model=m)
                           for m, g in per_model.items()])
    write_csv(scm_table, out / "scm.csv")
    matching = {m: psm(g, list(analysis.get("psm_covariates", []))) for m, g in per_model.items()}
    diagonal = {m: diagonal_test(g) for m, g in per_model.items()}
    write_json(out / "psm.json", matching, sort_keys=True)
    write_json(out / "diagonal.json", diagonal, sort_keys=True)
    plot_heatmaps(tables, models[0], order, out / "heatmaps.png")
    plot_causal(causal, scm_table, out / "causal.png")
    summary = {"family": "bias_decomposition", "suite": run.manifest.suite, "models": models,
               "bank_rows": int(len(rows)), "failed": run.failed, "matrix_order": order,
               "did_default": analysis.get("did", "abs"),
               "position": position.summary(run.answers) if not run.answers.empty else {}}
    if len(models) > 1:
        summary["comparisons"] = model_comparisons(rows, ALPHA)
        write_csv(pd.DataFrame(summary["comparisons"]["rows"]), out / "comparisons.csv")
    write_json(out / "summary.json", summary, sort_keys=True)
    return summary


def _per_model_csv(table: pd.DataFrame, models: int, path: Path) -> None:
    """The released schema, with a `model` column first when the run has several models."""
    columns = (["model"] if models > 1 else []) + [c for c in table.columns if c != "model"]
    write_csv(table[columns], path)


def _did(rows: pd.DataFrame, variant: str) -> dict[str, float]:
    complete = rows.dropna(subset=["m_zero_shot", "m_neutral_turn", "m_biased_turn"])
    if len(complete) < 2 or complete["unit"].nunique() < 2:
        return {"att": math.nan, "se": math.nan, "ci_low": math.nan, "ci_high": math.nan, "n_rows": len(complete)}
    return did(complete, variant)
