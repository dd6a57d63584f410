"""`spec report` for an effects score: per model its position bias, and per target outcome the contrasts
against the reference (shift in P and in logit, BH-FDR), the regression, a forest plot and the per-scenario
heatmap; for several models, their paired differences as a table and a forest plot."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from spec_audits.families.effects import plots
from spec_audits.sdk import (
    Block,
    Document,
    Heading,
    Image,
    Paragraph,
    Table,
    comparison_blocks,
    fmt,
    read_csv,
    read_score_folder,
)


def effects_report(score_dir: Path, plots_dir: Path) -> Document:
    _, summary = read_score_folder(score_dir, "contrasts.csv")
    scenarios = _scenarios(score_dir / "scenarios.csv")
    blocks: list[Block] = [Paragraph(_design_line(summary))]
    for model, found in summary["models"].items():
        blocks.append(Heading(f"Model {model}"))
        blocks.append(Paragraph(f"{found['answered']:,} answers scored ({found['mode']} mode); "
                                f"{found['abstained']:,} abstentions and {found['failed']:,} failed calls left out."))
        blocks.append(_position(found.get("position")))
        for target, result in found["targets"].items():
            blocks += _target_blocks(model, target, result, summary, scenarios, plots_dir)
    if "comparisons" in summary:
        blocks += comparison_blocks(summary["comparisons"], plots_dir)
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
            f"the baseline). Answer form: {_forms(summary)}. Combinations: {crossing['kind']} "
            f"({crossing['runs']} combinations of levels; "
            + ", ".join(f"each {name} level {times} times" for name, times in crossing["per_level"].items()) + ").")


def _forms(summary: dict[str, Any]) -> str:
    """The answer form, or each design's where the designs ask in different forms (scored apart)."""
    if "answer" in summary:
        return str(summary["answer"]["kind"])
    return ", ".join(f"{own['answer']['kind']} ({design})" for design, own in summary["designs"].items())


def _target_blocks(model: str, target: str, result: dict[str, Any], summary: dict[str, Any],
                   scenarios: pd.DataFrame, plots_dir: Path) -> list[Block]:
    probability = target != "value"
    what = f"P({target})" if probability else "the mean value"
    unit = "probability" if probability else "value"
    blocks: list[Block] = [Heading(f"Shifts in {what} against the reference", 3),
                           *_contrast_table(result, probability)]
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


def _contrast_table(result: dict[str, Any], probability: bool) -> list[Block]:
    """The contrasts, an absent interval as "—" with a numbered footnote that gives its reason."""
    header = ["term", "level", "reference", "n", "mean", "shift", "interval", "q (BH)"]
    if probability:
        header += ["logit shift", "logit interval"]
    rows: list[list[str]] = []
    notes: list[str] = []
    for c in result["contrasts"]:
        if "shift" not in c:
            rows.append([c["term"], c["level"], c["reference"], "—", "—", "—", c["absent"], "—"]
                        + (["—", "—"] if probability else []))
            continue
        row = [c["term"], c["level"], c["reference"], f"{c['n']:,}", fmt.num(c["mean"], 3), fmt.num(c["shift"], 3),
               _noted_interval(c, notes), fmt.num(c.get("q"), 3) + (" *" if c.get("significant") else "")]
        if probability:
            row += [fmt.num(c.get("logit_shift"), 3) if c.get("logit_shift") is not None else c.get("absent", "—"),
                    _interval(c.get("logit_low"), c.get("logit_high"))]
        rows.append(row)
    return [Table(header, rows), *_footnotes(notes)]


def _noted_interval(found: dict[str, Any], notes: list[str]) -> str:
    """The interval, or "—" with the number of the footnote that says why it is absent (added to `notes`)."""
    reason = found.get("interval_absent")
    if not reason:
        return _interval(found["low"], found["high"])
    notes += [] if reason in notes else [reason]
    return f"— ({notes.index(reason) + 1})"


def _footnotes(notes: list[str]) -> list[Block]:
    return [Paragraph(f"({i}) {reason}.") for i, reason in enumerate(notes, 1)]


def _position(position: dict[str, Any] | None) -> Paragraph:
    """Position bias (positions.csv, summary.json `position`): the position share with its interval and p."""
    if position is None or "absent" in position:
        return Paragraph(f"Position bias: absent ({(position or {}).get('absent', 'not scored by this version')}).")
    first, other = position["shown_first"], position["shown_elsewhere"]
    return Paragraph(
        f"Position bias: position share {fmt.num(position['position'], 3)} {_interval(*position['ci'])}, "
        f"p = {fmt.num(position['p'], 4)} (½: answers follow the meaning, 1: always the first slot). The first slot "
        f"took {fmt.num(first['first_share'], 3)} of {first['n']:,} answers with '{position['meaning']}' shown first "
        f"and {fmt.num(other['first_share'], 3)} of {other['n']:,} with it elsewhere, where "
        f"'{position['meaning']}' took {fmt.num(other['share'], 3)}.")


def _regression_blocks(regression: dict[str, Any]) -> list[Block]:
    head: list[Block] = [Heading(f"Regression: {regression['model']}", 3)]
    if "absent" in regression:
        return [*head, Paragraph(f"Absent: {regression['absent']}.")]
    notes: list[str] = []
    rows = [[t["term"], fmt.num(t["coef"], 3), fmt.num(t["se"], 3), _noted_interval(t, notes), fmt.num(t["p"], 4)]
            for t in regression["terms"]]
    return [*head, Table(["term", "coefficient", "SE", "interval", "p"], rows), *_footnotes(notes)]


def _interval(low: float | None, high: float | None) -> str:
    return "" if low is None or high is None else f"[{low:.3f}, {high:.3f}]"
