"""`spec report` for an effects score: per model its position bias, and per target outcome the contrasts
against the reference (shift in P, in percentage points, and in logit, BH-FDR), the regression, a forest plot
and the per-scenario heatmap; for several models, their paired differences as a table and a forest plot.
Levels read as their declared text with the code beside it ("60 years old (a60)"), where the manifest
records the text."""

from __future__ import annotations

from functools import partial
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

PP = 100.0  # a shift in P, times this, is in percentage points
Names = dict[str, dict[str, str]]  # factor -> level code -> what the report shows for it


def effects_report(score_dir: Path, plots_dir: Path) -> Document:
    _, summary = read_score_folder(score_dir, "contrasts.csv")
    names = level_names(summary["factors"])
    scenarios = _scenarios(score_dir / "scenarios.csv", names)
    blocks: list[Block] = [Paragraph(_design_line(summary, names))]
    for model, found in summary["models"].items():
        blocks.append(Heading(f"Model {model}"))
        blocks.append(Paragraph(f"{found['answered']:,} answers scored ({found['mode']} mode); "
                                f"{found['abstained']:,} abstentions and {found['failed']:,} failed calls left out."))
        blocks.append(_position(found.get("position")))
        for target, result in found["targets"].items():
            blocks += _target_blocks(model, target, result, summary, (scenarios, names), plots_dir)
    if "comparisons" in summary:
        blocks += comparison_blocks(summary["comparisons"], plots_dir, lambda name: _statistic_shown(names, name))
    return Document("Effects", blocks)


def level_names(factors: list[dict[str, Any]]) -> Names:
    """Per factor, each level as "text (code)" (the code alone where its text is the code or is not recorded:
    a manifest compiled before the texts were)."""
    return {f["name"]: {code: code if text == code else f"{text} ({code})" for code, text in f["texts"].items()}
            for f in factors if f.get("texts")}


def _statistic_shown(names: Names, statistic: str) -> str:
    """A comparison's statistic (`[design] P(yes): age=a20 vs a60`) with its levels shown as in the contrasts."""
    head, sep, contrast = statistic.rpartition(": ")
    column, equals, levels = contrast.partition("=")
    if not (sep and equals and " vs " in levels):
        return statistic  # an intervention against the baseline names no level
    level, reference = levels.split(" vs ", 1)
    return f"{head}: {column}={_shown(names, column, level)} vs {_shown(names, column, reference)}"


def _shown(names: Names, term: str, level: str) -> str:
    return names.get(term, {}).get(level, level)


def _term_shown(names: Names, term: str) -> str:
    """A regression term (`age=a20`, `age=a20:gender=woman`) with each level shown as in the contrasts."""
    return ":".join(f"{column}={_shown(names, column, level)}" if sep else column
                    for column, sep, level in (part.partition("=") for part in term.split(":")))


def _scenarios(path: Path, names: Names) -> pd.DataFrame:
    frame = read_csv(path, dtype=str) if path.is_file() and path.stat().st_size > 1 else pd.DataFrame()
    if frame.empty:
        return pd.DataFrame(columns=["model", "target", "scenario", "label", "shift"])
    labels = [f"{term}: {_shown(names, term, level)}"
              for term, level in zip(frame["term"], frame["level"], strict=True)]
    return frame.assign(shift=frame["shift"].astype(float), label=labels)


def _design_line(summary: dict[str, Any], names: Names) -> str:
    refs = ", ".join(f"{f['name']} = {_shown(names, f['name'], f['reference'])}" for f in summary["factors"])
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
                   shown: tuple[pd.DataFrame, Names], plots_dir: Path) -> list[Block]:
    scenarios, names = shown
    probability = target != "value"
    what = f"P({target})" if probability else "the mean value"
    scale, unit = (PP, plots.PP_UNIT) if probability else (1.0, "value")
    blocks: list[Block] = [Heading(f"Shifts in {what} against the reference", 3),
                           *_contrast_table(result, probability, names)]
    stem = plots.slug(f"{model}_{target}")
    labels = [f"{c['term']}: {_shown(names, c['term'], c['level'])} vs {_shown(names, c['term'], c['reference'])}"
              for c in result["contrasts"]]
    forest = partial(plots.forest, [_scaled(c, scale) for c in result["contrasts"]], labels,
                     f"{model}: shifts in {what}", unit)
    blocks.append(Image(plots_dir / f"forest_{stem}.png", f"Shift in {what} of each level against its reference, "
                        f"in {unit}, with {100 * (1 - summary['alpha']):.0f}% intervals clustered by scenario.",
                        forest))
    blocks += _regression_blocks(result["regression"], names)
    own = scenarios[(scenarios["model"] == model) & (scenarios["target"] == target)]
    heat = partial(plots.heatmap, own.assign(shift=own["shift"] * scale), f"{model}: shift in {what} per scenario",
                   unit)
    csv = " (scenarios.csv keeps it as a difference of probabilities)" if probability else " (scenarios.csv)"
    blocks += [Heading("Per scenario", 3),
               Image(plots_dir / f"heatmap_{stem}.png",
                     f"Each level's shift in {what} against its reference, in {unit}, per scenario{csv}.", heat)]
    return blocks


def _scaled(contrast: dict[str, Any], scale: float) -> dict[str, Any]:
    """The contrast with its shift and interval times `scale` (percentage points for a probability)."""
    return {**contrast, **{key: contrast[key] * scale for key in ("shift", "low", "high")
                           if contrast.get(key) is not None}}


def _contrast_table(result: dict[str, Any], probability: bool, names: Names) -> list[Block]:
    """The contrasts, an absent interval as "—" with a numbered footnote that gives its reason; a probability's
    mean as a percentage and its shift in percentage points (p), as the influence report gives them."""
    header = ["term", "level", "reference", "n", "mean", "shift (p)" if probability else "shift", "interval", "q (BH)"]
    if probability:
        header += ["logit shift", "logit interval"]
    rows: list[list[str]] = []
    notes: list[str] = []
    for c in result["contrasts"]:
        named = [c["term"], _shown(names, c["term"], c["level"]), _shown(names, c["term"], c["reference"])]
        if "shift" not in c:
            rows.append([*named, "—", "—", "—", c["absent"], "—"] + (["—", "—"] if probability else []))
            continue
        if probability:
            numbers = [fmt.pct(c["mean"]), fmt.pp(PP * c["shift"]), _noted_interval(_scaled(c, PP), notes, 1)]
        else:
            numbers = [fmt.num(c["mean"], 3), fmt.num(c["shift"], 3), _noted_interval(c, notes)]
        row = [*named, f"{c['n']:,}", *numbers, fmt.num(c.get("q"), 3) + (" *" if c.get("significant") else "")]
        if probability:
            row += [fmt.num(c.get("logit_shift"), 3) if c.get("logit_shift") is not None else c.get("absent", "—"),
                    _interval(c.get("logit_low"), c.get("logit_high"))]
        rows.append(row)
    units = [Paragraph("Mean: P at the level, as a percentage; shift and its interval: percentage points (p); "
                       "logit shift: logits.")] if probability else []
    return [Table(header, rows), *units, *_footnotes(notes)]


def _noted_interval(found: dict[str, Any], notes: list[str], digits: int = 3) -> str:
    """The interval, or "—" with the number of the footnote that says why it is absent (added to `notes`)."""
    reason = found.get("interval_absent")
    if not reason:
        return _interval(found["low"], found["high"], digits)
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


def _regression_blocks(regression: dict[str, Any], names: Names) -> list[Block]:
    head: list[Block] = [Heading(f"Regression: {regression['model']}", 3)]
    if "absent" in regression:
        return [*head, Paragraph(f"Absent: {regression['absent']}.")]
    notes: list[str] = []
    rows = [[_term_shown(names, t["term"]), fmt.num(t["coef"], 3), fmt.num(t["se"], 3), _noted_interval(t, notes),
             fmt.num(t["p"], 4)] for t in regression["terms"]]
    return [*head, Table(["term", "coefficient", "SE", "interval", "p"], rows), *_footnotes(notes)]


def _interval(low: float | None, high: float | None, digits: int = 3) -> str:
    return "" if low is None or high is None else f"[{low:.{digits}f}, {high:.{digits}f}]"
