"""The influence report section: headline, neutrality variants, breakdowns, regression, noise floor, plots,
and a probe run's labels by trial kind."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from spec_audits.families.influence.plots import all_plots
from spec_audits.sdk import (
    Block,
    Document,
    Heading,
    Image,
    Paragraph,
    ScoreInputError,
    Table,
    comparison_blocks,
    fmt,
    read_csv,
    read_score_folder,
)

BREAKDOWN_HEADER = [
    "Level",
    "Cond.",
    "|Effect|",
    "|Steer|",
    "Steer",
    "|Asym|",
    "|N-Asym|",
    "Sig",
    "BF",
    "Sig asym",
]


def influence_report(score_dir: Path, plots_dir: Path) -> Document:
    """The report of a `spec score` folder of an influence run (summary.json + conditions.csv)."""
    conditions_path, summary = read_score_folder(score_dir, "conditions.csv")
    conditions = read_csv(conditions_path, keep_default_na=False, na_values=[""])
    plots = all_plots(summary, conditions, plots_dir)
    probe = _read_probe(score_dir) if "probe" in summary else None
    by_model = score_dir / "probe_by_model.csv"
    per_model = read_csv(by_model, keep_default_na=False, na_values=[""]) if probe is not None and \
        by_model.is_file() else None
    doc = build_document(summary, plots, probe, per_model)
    if "comparisons" in summary:
        doc.blocks.extend(comparison_blocks(summary["comparisons"], plots_dir))
    return doc


def build_document(summary: dict[str, Any], plots: dict[str, list[Image]],
                   probe: pd.DataFrame | None = None, per_model: pd.DataFrame | None = None) -> Document:
    """Headline, neutrality variants, breakdowns, regression, noise floor and plots per benchmark; a probe
    run's label tables (probe.csv, and Tab. 22's rows from probe_by_model.csv) last."""
    doc = Document("Direction-flipped influence audit")
    settings = summary["settings"]
    doc.blocks.append(
        Paragraph(
            f"Counts: {summary['count_source_text']}. α = {settings['alpha']}; asymmetry Wald variance "
            f"V_A + V_B + {settings['asym_variance'][0]}·V_0; two-proportion z with "
            f"{'pooled' if settings['pooled_z'] else 'unpooled'} SE; BH-FDR within benchmark × test family; "
            f"cluster bootstrap over factors, B = {settings['bootstrap']}, seed {settings['seed']}. "
            "Shifts in percentage points (p)."
        )
    )
    doc.blocks.append(Heading("Headline figures"))
    doc.blocks.append(_headline_table(summary["benchmarks"]))
    doc.blocks.extend(_absent_notes(summary["benchmarks"]))
    doc.blocks.extend(plots.get("headline", []))
    doc.blocks.append(Heading("Asymmetry among baseline-neutral conditions, by neutrality definition"))
    doc.blocks.append(_neutrality_table(summary["benchmarks"]))
    for bench, result in summary["benchmarks"].items():
        doc.blocks.append(Heading(f"Benchmark {bench}"))
        for axis, levels in result["by"].items():
            doc.blocks.append(Heading(f"By {axis}", 3))
            doc.blocks.append(Table(BREAKDOWN_HEADER, [_breakdown_row(level, m) for level, m in levels.items()]))
        doc.blocks.extend(_position_blocks(result.get("position", {})))
        doc.blocks.append(Heading("|Asym| on |baseline bias| (mixed model)", 3))
        doc.blocks.append(Paragraph(_regression_text(result["regression"])))
        if "noise_floor" in result:
            doc.blocks.append(Heading("Noise floor", 3))
            doc.blocks.append(Paragraph(_noise_text(result["noise_floor"])))
            doc.blocks.append(_noise_table(result["noise_floor"]))
        doc.blocks.extend(plots.get(bench, []))
    if "pooled_regression" in summary:
        doc.blocks.append(Heading("Pooled regression"))
        doc.blocks.append(Paragraph(_regression_text(summary["pooled_regression"])))
    if probe is not None:
        doc.blocks.extend(_probe_blocks(summary["probe"], probe))
        if per_model is not None:
            doc.blocks.append(_probe_model_table(per_model))
    return doc


def _read_probe(score_dir: Path) -> pd.DataFrame:
    path = score_dir / "probe.csv"
    if not path.is_file():
        raise ScoreInputError(path, "file not found (summary.json has a probe: score again with --parent)")
    return read_csv(path, keep_default_na=False, na_values=[""])


def _share(r: Any) -> str:
    """One label's share of a trial kind (a cross-tab row from itertuples) as k/n with its interval."""
    return fmt.rate({"k": int(r.k), "n": int(r.n), "rate": None if pd.isna(r.rate) else r.rate,
                     "ci": None if pd.isna(r.lo) else [r.lo, r.hi]})


def _probe_blocks(found: dict[str, Any], table: pd.DataFrame) -> list[Block]:
    """The judge's labels by trial kind (Tab. 22), each as share (k/n) [Wilson interval]."""
    labels = list(dict.fromkeys(table["label"]))
    rows = []
    for kind, of_kind in table.groupby("kind", sort=False):
        first = of_kind.iloc[0]
        shares = [_share(r) for r in of_kind.itertuples()]
        rows.append([str(kind), str(first["n"]), *shares, str(first["unlabelled"])])
    share = found["stated_vs_revealed"]
    text = (f"{found['trials']} probed trials, {found['unlabelled']} left unlabelled by the judge. "
            f"ACK_DISCLAIMED among significant-backfire trials (stated vs revealed): {fmt.rate(share)}.")
    blocks: list[Block] = [Heading("Follow-up probe (App. P)"), Paragraph(text),
                           Table(["Trial kind", "Labelled", *labels, "Unlabelled"], rows)]
    check = found.get("judge_validation")
    if check is not None:
        blocks.append(Paragraph(f"Judge against {check['n']} human labels: agreement {fmt.pct(check['agreement'])}, "
                                f"Cohen's κ = {fmt.num(check['cohens_kappa'])}."))
    return blocks


def _probe_model_table(table: pd.DataFrame) -> Table:
    """Tab. 22: per model and benchmark, the significant-backfire and -compliance trials' label shares."""
    labels = list(dict.fromkeys(table["label"]))
    rows = []
    for (bench, model, kind), cell in table.groupby(["benchmark", "model", "kind"], sort=False):
        if kind in ("significant backfire", "significant compliance") and int(cell.iloc[0]["n"]):
            rows.append([f"{model} {bench}, {kind}", str(cell.iloc[0]["n"]),
                         *(fmt.pct(None if pd.isna(r) else r) for r in cell["rate"])])
    return Table(["Cell", "n", *labels], rows)


def _rate(r: dict[str, Any]) -> str:
    """A rate, or a dash where the design cannot give it (the notes under the table say why)."""
    return "—" if "absent" in r else fmt.rate(r)


def _pct(r: dict[str, Any]) -> str:
    return "—" if "absent" in r else fmt.pct(r["rate"])


def _absent_notes(benchmarks: dict[str, Any]) -> list[Block]:
    """Why a headline figure is a dash, and which statistics each benchmark's conditions lack and why."""
    lines = []
    for bench, result in benchmarks.items():
        h = result["headline"]
        figures = {"mean |shift|": h["mean_abs_shift"]["all"],
                   "sig. asymmetry among neutral": h["asymmetry_among_neutral"]["binomial"]["raw"],
                   "backfire among significant": h["backfire_among_significant"]}
        lines += [f"{bench}: {name} is absent: {r['absent']}." for name, r in figures.items() if "absent" in r]
        lines += [f"{bench}: in {count} condition(s), statistics are absent: {reason}."
                  for reason, count in result.get("absent", {}).items()]
    return [Paragraph(" ".join(lines))] if lines else []


def _position_blocks(found: dict[str, Any]) -> list[Block]:
    """Share of answers picking the option shown first, by the group shown first and over both orders."""
    blocks: list[Block] = [Heading("Position bias (share of answers picking the option shown first)", 3)]
    if "absent" in found:
        return blocks + [Paragraph(f"Not measured: {found['absent']}.")]
    rows = [[arm, _first(v["first_A"]), _first(v["first_B"]),
             f"{fmt.pct(v['position'])} {fmt.pct_ci(v['ci'])}".strip(), fmt.num(v["p"], 3)]
            for arm, v in found.items() if arm != "position_biased_baselines"]
    blocks.append(Table(["Arm", "A shown first", "B shown first", "Both orders (95% CI)", "p"], rows))
    biased = found["position_biased_baselines"]
    blocks.append(Paragraph(f"Position-biased baselines (p < α; never called neutral): {fmt.rate(biased)}. "
                            "50% is no position bias, 100% always the first shown, 0% always the second."))
    return blocks


def _first(share: dict[str, Any]) -> str:
    k, n = share["k"], share["n"]
    counts = f"{k:.0f}/{n:.0f}" if float(k).is_integer() and float(n).is_integer() else f"{k:.1f}/{n:.1f}"
    return f"{fmt.pct(share['share'])} ({counts})"


def _headline_table(benchmarks: dict[str, Any]) -> Table:
    header = [
        "Benchmark",
        "Mean |shift|",
        "without few-shot",
        "one-sentence cues",
        "Sig. asym among neutral",
        "after BH",
        "Backfire among sig.",
    ]
    rows = []
    for bench, result in benchmarks.items():
        h = result["headline"]
        shifts = ["—" if "absent" in s else f"{fmt.pp(s['mean_pp'])} {fmt.pp_ci(s['ci_pp'])}"
                  for s in h["mean_abs_shift"].values()]
        neutral = h["asymmetry_among_neutral"]["binomial"]
        rows.append(
            [
                bench,
                *shifts,
                _rate(neutral["raw"]),
                _rate(neutral["bh"]),
                _rate(h["backfire_among_significant"]),
            ]
        )
    return Table(header, rows)


def _neutrality_table(benchmarks: dict[str, Any]) -> Table:
    rows = []
    for bench, result in benchmarks.items():
        for name, v in result["headline"]["asymmetry_among_neutral"].items():
            rows.append(
                [
                    bench,
                    name,
                    str(v["neutral"]),
                    _pct(v["raw"]),
                    _pct(v["raw_alpha_01"]),
                    _pct(v["bh"]),
                ]
            )
    return Table(["Benchmark", "Neutrality", "n", "α = .05", "α = .01", "BH q = .05"], rows)


def _breakdown_row(level: str, m: dict[str, Any]) -> list[str]:
    return [
        level,
        str(m["conditions"]),
        fmt.pp(m["mean_abs_shift_pp"]),
        fmt.num(m["mean_abs_steerability"]),
        fmt.num(m["mean_steerability"]),
        fmt.num(m["mean_abs_asymmetry"]),
        fmt.num(m["mean_abs_normalized_asymmetry"]),
        _pct(m["significant_effects"]),
        _pct(m["backfire_among_significant"]),
        _pct(m["significant_asymmetry"]),
    ]


def _regression_text(fit: dict[str, Any]) -> str:
    r = f"signed r(f0(B) − 0.5, Asym) = {fmt.num(fit.get('pearson_r'))}"
    if "beta" not in fit:
        return f"n = {fit['n']}; {fit.get('error', 'not fitted')}; {r}."
    ci = f" [{fit['beta_ci'][0]:+.2f}, {fit['beta_ci'][1]:+.2f}]" if fit["beta_ci"] else " (CI not estimable)"
    return (
        f"n = {fit['n']}; β1 = {fit['beta']:+.2f}{ci}; "
        f"marginal R² = {fit['r2_marginal']:.3f}; "
        f"conditional R² = {fit['r2_conditional']:.3f}; {r}."
    )


def _noise_text(floor: dict[str, Any]) -> str:
    ratio = floor.get("shift_to_noise")
    return (
        f"{floor['cells']} cells; mean |baseline drift| {fmt.pp(floor['mean_abs_drift_pp'])} "
        f"(max {fmt.pp(floor['max_abs_drift_pp'])}); modal flip rate {fmt.pct(floor['mean_flip_rate'])}; "
        f"shift / noise = {fmt.num(ratio, 1)}×. f0 as the {floor.get('f0', 'paper')} defines it; flips per "
        f"{floor.get('flips', 'prompt')}."
    )


def _noise_table(floor: dict[str, Any]) -> Table:
    """Tab. 19's rows: per model, its cells, mean |drift| and mean flip rate; then the mean over all cells."""
    rows = [[model, str(m["cells"]), fmt.pp(m["mean_abs_drift_pp"]), fmt.pct(m["mean_flip_rate"])]
            for model, m in floor.get("by_model", {}).items()]
    rows.append(["Mean", str(floor["cells"]), fmt.pp(floor["mean_abs_drift_pp"]), fmt.pct(floor["mean_flip_rate"])])
    return Table(["model", "cells", "|drift| (p)", "flip rate"], rows)
