"""`spec report` for an effects score: per model and target outcome, the contrasts against the reference
(shift in P and in logit, BH-FDR), the regression, a forest plot and the per-scenario heatmap."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from spec_audits.families.effects import plots
from spec_audits.runner.files_out import read_csv
from spec_audits.runner.report import fmt
from spec_audits.runner.report.document import Block, Document, Heading, Image, Paragraph, Table
from spec_audits.runner.score_input import read_score_folder


def effects_report(score_dir: Path, plots_dir: Path) -> Document:
    _, summary = read_score_folder(score_dir, "contrasts.csv")
    scenarios = _scenarios(score_dir / "scenarios.csv")
    blocks: list[Block] = [Paragraph(_design_line(summary))]
    for model, found in summary["models"].items():
        blocks.append(Heading(f"Model {model}"))
        blocks.append(Paragraph(f"{found['answered']:,} answers scored ({found['mode']} mode); "
                                f"{found['abstained']:,} abstentions and {found['failed']:,} failed calls left out."))
        for target, result in found["targets"].items():
            blocks += _target_blocks(model, target, result, summary, scenarios, plots_dir)
    return Document("Effects", blocks)


def _scenarios(path: Path) -> pd.DataFrame:
    frame = read_csv(path, dtype=str) if path.is_file() and path.stat().st_size > 1 else pd.DataFrame()
    if frame.empty:
        return pd.DataFrame(columns=["model", "target", "scenario", "label", "shift"])
    return frame.assign(shift=frame["shift"].astype(float),
                        label=frame["term"] + "=" + frame["level"])


def _design_line(summary: dict[str, Any]) -> str:
    refs = ", ".join(f"{f['name']} = {f['reference']}" for f in summary["factors"])
    crossing = summary["crossing"]
    return (f"Reference: {refs}; conditions: {', '.join(summary['conditions'])} (each intervention compared with "
            f"the baseline). Answer form: {summary['answer']['kind']}. Combinations: {crossing['kind']} "
            f"({crossing['runs']} combinations of levels; "
            + ", ".join(f"each {name} level {times} times" for name, times in crossing["per_level"].items()) + ").")


def _target_blocks(model: str, target: str, result: dict[str, Any], summary: dict[str, Any],
                   scenarios: pd.DataFrame, plots_dir: Path) -> list[Block]:
    probability = target != "value"
    what = f"P({target})" if probability else "the mean value"
    unit = "probability" if probability else "value"
    blocks: list[Block] = [Heading(f"Shifts in {what} against the reference", 3), _contrast_table(result, probability)]
    stem = plots.slug(f"{model}_{target}")
    forest = plots.forest(result["contrasts"], f"{model}: shifts in {what}", unit, plots_dir / f"forest_{stem}.png")
    blocks.append(Image(forest, f"Shift in {what} of each level against its reference, with "
                                f"{100 * (1 - summary['alpha']):.0f}% intervals clustered by scenario."))
    blocks += _regression_blocks(result["regression"])
    own = scenarios[(scenarios["model"] == model) & (scenarios["target"] == target)]
    heat = plots.heatmap(own, f"{model}: shift in {what} per scenario", plots_dir / f"heatmap_{stem}.png")
    blocks += [Heading("Per scenario", 3), Image(heat, f"Each level's shift in {what} against its reference, "
                                                       "per scenario (scenarios.csv).")]
    return blocks


def _contrast_table(result: dict[str, Any], probability: bool) -> Table:
    header = ["term", "level", "reference", "n", "mean", "shift", "interval", "q (BH)"]
    if probability:
        header += ["logit shift", "logit interval"]
    rows = []
    for c in result["contrasts"]:
        if "shift" not in c:
            rows.append([c["term"], c["level"], c["reference"], "—", "—", "—", c["absent"], "—"]
                        + (["—", "—"] if probability else []))
            continue
        row = [c["term"], c["level"], c["reference"], f"{c['n']:,}", fmt.num(c["mean"], 3), fmt.num(c["shift"], 3),
               _interval(c["low"], c["high"]), fmt.num(c.get("q"), 3) + (" *" if c.get("significant") else "")]
        if probability:
            row += [fmt.num(c.get("logit_shift"), 3) if c.get("logit_shift") is not None else c.get("absent", "—"),
                    _interval(c.get("logit_low"), c.get("logit_high"))]
        rows.append(row)
    return Table(header, rows)


def _regression_blocks(regression: dict[str, Any]) -> list[Block]:
    head: list[Block] = [Heading(f"Regression: {regression['model']}", 3)]
    if "absent" in regression:
        return [*head, Paragraph(f"Absent: {regression['absent']}.")]
    rows = [[t["term"], fmt.num(t["coef"], 3), fmt.num(t["se"], 3), _interval(t["low"], t["high"]),
             fmt.num(t["p"], 4)] for t in regression["terms"]]
    return [*head, Table(["term", "coefficient", "SE", "interval", "p"], rows)]


def _interval(low: float | None, high: float | None) -> str:
    return "" if low is None or high is None else f"[{low:.3f}, {high:.3f}]"
