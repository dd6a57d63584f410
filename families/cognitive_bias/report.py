"""The conditional-bias report section: Table 1, the diagonal test, the per-target-bias mixed model, DiD,
SCM and PSM, with the three heatmaps and the DiD/SCM panel (and several models' paired comparisons), all
from the files `spec score` wrote."""

from __future__ import annotations

import json
import math
from functools import partial
from pathlib import Path
from typing import Any

import pandas as pd

from spec_audits.sdk import (
    DOCUMENT_BYTES,
    Block,
    Document,
    Heading,
    Image,
    Paragraph,
    Table,
    comparison_blocks,
    fmt,
    read_bytes_capped,
    read_csv,
    read_score_folder,
    write_bytes,
)

PLOTS = (("heatmaps.png", "Presence Δn, content δ and total Δb per (target bias, human bias), scale [-0.3, 0.3]; "
                          "hatched grey: no scored row in that cell."),
         ("causal.png", "DiD ATT (both variants) with 95% CIs, and the SCM gap per target bias."))


def bias_report(score_dir: Path, plots_dir: Path) -> Document:
    effects_path, summary = read_score_folder(score_dir, "effects.csv")
    doc = Document(f"Conditional cognitive-bias audit: {summary['suite']}")
    doc.blocks.append(Paragraph(
        f"{summary['bank_rows']} scored bank rows from {len(summary['models'])} model(s) "
        f"({', '.join(summary['models'])}); {summary['failed']} failed calls count as abstentions. "
        "Presence Δn = |m_n| − |m∅|, content δ = |m_b| − |m_n|, total Δb = |m_b| − |m∅|; tests are over "
        "bank rows (* p < .05, ** p < .01, *** p < .001)."))
    doc.blocks += [Image(plots_dir / name, caption, partial(_copy, score_dir / name))
                   for name, caption in PLOTS if (score_dir / name).is_file()]
    effects = _read(effects_path, dtype={"stars": str}).fillna({"stars": ""})
    doc.blocks += [Heading("Table 1: mean |m| per condition and the effects"),
                   _table(effects, ["model", "quantity", "n", "mean", "sd", "t", "p", "stars", "suppressed",
                                    "amplified"])]
    doc.blocks += _position_blocks(summary.get("position", {}))
    doc.blocks += [Heading("Abstentions per condition (never scored as 0)"),
                   _table(_read(score_dir / "abstention.csv"), ["model", "condition", "answered", "abstained",
                                                                       "rate"])]
    diagonal = json.loads(read_bytes_capped(score_dir / "diagonal.json", DOCUMENT_BYTES))
    doc.blocks += [Heading("Diagonal test: content effect on vs off the diagonal"),
                   _table(pd.DataFrame([{"model": m, **v} for m, v in diagonal.items()]),
                          ["model", "n_diagonal", "n_off", "mean_diagonal", "mean_off", "t", "p", "d"])]
    if (score_dir / "lmm.csv").is_file():  # score folders written before the mixed model have none
        mixed = pd.read_csv(score_dir / "lmm.csv", dtype={"note": str}).fillna({"note": ""})
        doc.blocks += [Heading("Per-target-bias mixed model (the release's: δ ~ human-bias code, unit intercepts)"),
                       _table(mixed, ["model", "target_bias", "lmm_coef", "lmm_p", "n", "units", "note"])]
    doc.blocks += [Heading("Difference in differences (scenario-clustered SEs)"),
                   _table(_read(score_dir / "causal.csv"),
                          ["model", "variant", "att", "se", "ci_low", "ci_high", "n_rows"])]
    doc.blocks += [Heading("Synthetic control per target bias"),
                   _table(_read(score_dir / "scm.csv"), ["model", "target_bias", "gap", "p_placebo", "donors"])]
    matching = json.loads(read_bytes_capped(score_dir / "psm.json", DOCUMENT_BYTES))
    doc.blocks += [Heading("Propensity-score matching (treatment: on the diagonal)"),
                   _table(pd.DataFrame([{"model": m, **{k: v for k, v in r.items() if k != "smd"}}
                                        for m, r in matching.items()]),
                          ["model", "n_treated", "n_control", "att_matched", "p_matched", "att_unmatched", "balanced"])]
    if "comparisons" in summary:
        doc.blocks += comparison_blocks(summary["comparisons"], plots_dir)
    return doc


def _copy(drawn: Path, path: Path) -> None:
    """A plot `spec score` drew, copied into the report's plots folder (read, never followed as a link)."""
    if path.parent.resolve() != drawn.parent.resolve():  # unless the plots folder is the score folder
        write_bytes(path, read_bytes_capped(drawn, DOCUMENT_BYTES))


def _position_blocks(found: dict[str, Any]) -> list[Block]:
    """First-shown answers per order (reversed or not) and the order effect, per model and condition."""
    rows = [[model, arm, _share(v["reversed_0"]), _share(v["reversed_1"]), fmt.pct(v["position"]),
             fmt.num(v["p"], 3) if v["p"] is not None else v.get("absent", "n/a")]
            for model, arms in found.items() for arm, v in arms.items()]
    if not rows:
        return []
    return [Heading("Position bias (answers picking the option shown first)"),
            Table(["model", "condition", "original order", "reversed", "both orders", "p (order effect)"], rows)]


def _share(share: dict[str, Any]) -> str:
    return "n/a" if share["share"] is None else f"{fmt.pct(share['share'])} ({share['k']}/{share['n']})"


def _read(path: Path, **options: Any) -> pd.DataFrame:
    """A table `spec score` wrote; names such as a model called "NA" stay text, blank cells are missing."""
    return read_csv(path, keep_default_na=False, na_values=[""], **options)


def _table(frame: pd.DataFrame, columns: list[str]) -> Table | Paragraph:
    present = [c for c in columns if c in frame.columns]
    if frame.empty or not present:
        return Paragraph("Nothing to show: too few scored rows for this statistic.")
    return Table(present, [[_cell(v) for v in row] for row in frame[present].itertuples(index=False)])


def _cell(value: Any) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "n/a"
    if isinstance(value, float):
        return fmt.num(value, 3)
    return str(value)
