"""PNG plots (matplotlib, Agg): Fig. 3-style headline panels, asymmetry heatmaps, per-condition forests."""

from __future__ import annotations

import re
import textwrap
from collections.abc import Sequence
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from spec_audits.sdk import (
    Image,
    cannot_draw,
    no_data_background,
    pyplot,
    text_colour,
    write_figure,
)

if TYPE_CHECKING:  # matplotlib itself loads with the first plot drawn (pyplot): `spec score` draws none
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

SHIFT_LABELS = {
    "all": "all influences",
    "no_few_shot": "without few-shot",
    "one_sentence": "one-sentence cues",
}


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "-", text).strip("-").lower() or "x"


def _save(fig: Figure, path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    write_figure(fig, path, dpi=110, bbox_inches="tight")
    pyplot().close(fig)
    return path


def _interval(lo: np.ndarray, hi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Centre and half-width of [lo, hi]: error bars drawn from the interval itself, because a percentile
    bootstrap interval need not contain the point estimate (so estimate-relative bars could be negative)."""
    return (lo + hi) / 2, (hi - lo) / 2


def _bars(ax: Axes, x: np.ndarray, values: Sequence[float | None], cis: Sequence[Sequence[float | None] | None],
          width: float, label: str) -> None:
    vals = np.array([np.nan if v is None else v for v in values], float)
    bounds = np.array([ci if ci and ci[0] is not None else (np.nan, np.nan) for ci in cis], float).reshape(-1, 2)
    ax.bar(x, np.nan_to_num(vals), width, label=label)
    centre, half = _interval(bounds[:, 0], bounds[:, 1])
    ax.errorbar(x, centre, yerr=half, fmt="none", ecolor="black", capsize=3)
    # each label sits above its bar and its error bar, so the bar's interval never strikes it through
    tops = np.fmax(np.nan_to_num(vals), bounds[:, 1])
    for xi, top, value in zip(x, np.nan_to_num(tops), vals, strict=True):
        ax.annotate("n/a" if np.isnan(value) else f"{value:.1f}", (xi, top), xytext=(0, 3), textcoords="offset points",
                    ha="center", va="bottom", fontsize=8, fontweight="bold")
    ax.update_datalim(np.column_stack([x, 1.08 * np.nan_to_num(tops)]))  # room for the labels below the title


def _why_empty(entries: list[tuple[str, dict[str, Any]]], key: str) -> str | None:
    """Why a panel has nothing to draw (each benchmark's recorded reason), or None when any entry has a value."""
    if any(entry.get(key) is not None for _, entry in entries):
        return None
    reasons = dict.fromkeys(f"{bench}: {entry.get('absent') or 'no data'}" for bench, entry in entries)
    return "\n".join(textwrap.fill(reason, 45) for reason in reasons)  # a third of the figure's width


def headline_panels(summary: dict[str, Any], path: Path) -> Path:
    """Shift (p, bootstrap CI), sig. asymmetry among baseline-neutral and backfire among sig. (%, Wilson); a
    panel whose every figure is absent says why inside it."""
    benches = list(summary["benchmarks"])
    headlines = {b: summary["benchmarks"][b]["headline"] for b in benches}
    x = np.arange(len(benches))
    fig, axes = pyplot().subplots(1, 3, figsize=(13, 4.5), layout="constrained")
    panels = [
        ("Mean |choice-rate shift|", "mean_pp", [(b, headlines[b]["mean_abs_shift"][name]) for name in SHIFT_LABELS
                                                 for b in benches]),
        ("Sig. asymmetry among baseline-neutral", "rate",
         [(b, headlines[b]["asymmetry_among_neutral"]["binomial"][key]) for key in ("raw", "bh") for b in benches]),
        ("Backfire among significant effects", "rate", [(b, headlines[b]["backfire_among_significant"])
                                                        for b in benches]),
    ]
    drawn = []
    for ax, (title, key, entries) in zip(axes, panels, strict=True):
        why = _why_empty(entries, key)
        if why is not None:
            cannot_draw(ax, title, why)
        else:
            drawn.append(ax)
    if axes[0] in drawn:
        for i, (name, label) in enumerate(SHIFT_LABELS.items()):
            shifts = [headlines[b]["mean_abs_shift"][name] for b in benches]
            _bars(axes[0], x + (i - 1) * 0.27, [s["mean_pp"] for s in shifts], [s["ci_pp"] for s in shifts], 0.27,
                  label)
        axes[0].set(title=panels[0][0], ylabel="percentage points")
    if axes[1] in drawn:
        for i, (key, label) in enumerate((("raw", "α = .05"), ("bh", "BH q = .05"))):
            rates = [headlines[b]["asymmetry_among_neutral"]["binomial"][key] for b in benches]
            _bars(axes[1], x + (i - 0.5) * 0.4, *_percent(rates), 0.4, label)
        axes[1].set(title=panels[1][0], ylabel="% of neutral conditions")
    if axes[2] in drawn:
        rates = [headlines[b]["backfire_among_significant"] for b in benches]
        _bars(axes[2], x, *_percent(rates), 0.5, "backfire")
        axes[2].set(title=panels[2][0], ylabel="% of significant directed conditions")
    for ax in drawn:
        ax.set_xticks(x, benches)
        ax.set_ylim(bottom=0)
        ax.margins(y=0.15)
    for ax in [a for a in axes[:2] if a in drawn]:
        ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.1), ncol=3, frameon=False)
    return _save(fig, path)


def compared_models(by: dict[str, dict[str, Any]]) -> dict[str, Any] | None:
    """A benchmark's breakdown per model (x reasoning setting) where it has several, else None (no plot)."""
    levels = by.get("model x reasoning") or by.get("model") or {}
    return levels if len(levels) >= 2 else None


def model_panels(levels: dict[str, Any], bench: str, path: Path) -> Path:
    """Per model (x reasoning setting): mean |shift|, sig. asymmetry among neutral and backfire among sig."""
    names = list(levels)
    x = np.arange(len(names))
    fig, axes = pyplot().subplots(1, 3, figsize=(4 + 1.2 * len(names) * 3, 4.5), layout="constrained")
    shifts = [levels[m]["mean_abs_shift_pp"] for m in names]
    _bars(axes[0], x, shifts, [None] * len(names), 0.6, "mean |shift|")
    axes[0].set(title="Mean |choice-rate shift|", ylabel="percentage points")
    for ax, key, title in ((axes[1], "asymmetry_among_neutral", "Sig. asymmetry among baseline-neutral"),
                           (axes[2], "backfire_among_significant", "Backfire among significant effects")):
        _bars(ax, x, *_percent([levels[m][key] for m in names]), 0.6, key)
        ax.set(title=title, ylabel="%")
    for ax in axes:
        ax.set_xticks(x, names, rotation=30, ha="right", fontsize=7)
        ax.set_ylim(bottom=0)
        ax.margins(y=0.15)
    fig.suptitle(f"{bench}: models compared (95% Wilson CIs for rates)")
    return _save(fig, path)


def _percent(rates: list[dict[str, Any]]) -> tuple[list[float | None], list[list[float] | None]]:
    values = [None if r["rate"] is None else 100 * r["rate"] for r in rates]
    cis = [None if r["ci"] is None else [100 * r["ci"][0], 100 * r["ci"][1]] for r in rates]
    return values, cis


def model_label(conditions: pd.DataFrame) -> pd.Series:
    """model, or 'model | reasoning' when the reasoning key exists."""
    label = conditions["model"].astype(str)
    return label + " | " + conditions["reasoning"].astype(str) if "reasoning" in conditions.columns else label


def asymmetry_heatmaps(conditions: pd.DataFrame, bench: str, path: Path, alpha: float) -> Path:
    """Signed Asym by factor × influence, one panel per model; * marks a significant Wald test."""
    data = conditions.assign(_model=model_label(conditions))
    models = sorted(data["_model"].unique())
    cols = min(3, len(models))
    rows = int(np.ceil(len(models) / cols))
    factors, influences = (
        sorted(data["factor"].astype(str).unique()),
        sorted(data["influence"].astype(str).unique()),
    )
    magnitudes = np.abs(data["asymmetry"].to_numpy(float))
    limit = (float(np.nanmax(magnitudes)) if np.isfinite(magnitudes).any() else 0.0) or 1.0
    fig, axes = pyplot().subplots(
        rows,
        cols,
        figsize=(2.0 + 1.0 * len(influences) * cols, 1.2 + (0.5 * len(factors) + 1.8) * rows),
        squeeze=False,
        layout="constrained",
    )
    for ax, model in zip(axes.flat, models, strict=False):
        sub = data[data["_model"] == model]
        grid = sub.pivot_table(index="factor", columns="influence", values="asymmetry", aggfunc="mean").reindex(
            index=factors, columns=influences
        )
        sig = (
            sub.pivot_table(index="factor", columns="influence", values="p_asymmetry", aggfunc="min").reindex(
                index=factors, columns=influences
            )
            < alpha
        )
        no_data_background(ax)
        image = ax.imshow(grid.to_numpy(float), cmap="RdBu_r", vmin=-limit, vmax=limit, aspect="auto")
        for (i, j), value in np.ndenumerate(grid.to_numpy(float)):
            if not np.isnan(value):
                ax.text(j, i, f"{value:.2f}{'*' if sig.iat[i, j] else ''}", ha="center", va="center", fontsize=7,
                        color=text_colour(image.cmap(image.norm(value))))
        ax.set_xticks(range(len(influences)), influences, rotation=40, ha="right", fontsize=7)
        ax.set_yticks(range(len(factors)), factors, fontsize=7)
        ax.set_title(model, fontsize=9)
    for ax in list(axes.flat)[len(models) :]:
        ax.axis("off")
    fig.colorbar(image, ax=axes, shrink=0.8, label="Asym = s(B) − s(A)")
    fig.suptitle(f"{bench}: steerability asymmetry (* p < {alpha}; hatched grey: no data)")
    return _save(fig, path)


def effect_forest(conditions: pd.DataFrame, title: str, path: Path) -> Path:
    """Δ toward A and toward B per condition with 95% Newcombe score CIs (between-item t intervals in a
    logprob run), in percentage points; a direction the design lacks has no mark."""
    data = conditions.sort_values(["factor", "influence"]).reset_index(drop=True)
    labels = (data["factor"].astype(str) + " · " + data["influence"].astype(str)).tolist()
    y = np.arange(len(data))
    fig, ax = pyplot().subplots(figsize=(7, 1.2 + 0.28 * len(data)))
    for offset, d, colour in ((-0.15, "A", "tab:blue"), (0.15, "B", "tab:orange")):
        centre, half = _interval(
            100 * data[f"effect_{d}_lo"].to_numpy(float), 100 * data[f"effect_{d}_hi"].to_numpy(float)
        )
        ax.errorbar(centre, y + offset, xerr=half, fmt="none", color=colour, capsize=2)
        label = "toward A (Δ_A)" if d == "A" else "toward B (Δ_B)"
        ax.plot(100 * data[f"effect_{d}"].to_numpy(float), y + offset, "o", ms=3, color=colour, label=label)
    ax.axvline(0, color="grey", lw=0.8)
    ax.set_yticks(y, labels, fontsize=7)
    ax.invert_yaxis()
    ax.set(xlabel="influence effect Δ_d (percentage points; < 0 means the cue backfired)", title=title)
    ax.legend(fontsize=7, loc="lower right")
    return _save(fig, path)


def all_plots(summary: dict[str, Any], conditions: pd.DataFrame, out: Path) -> dict[str, list[Image]]:
    """Every plot of the report, to be drawn when it is written: 'headline' plus one list per benchmark."""
    alpha = float(summary["settings"]["alpha"])
    plots = {"headline": [Image(out / "headline.png", "Headline figures with 95% CIs (bootstrap for shifts, Wilson "
                                "for rates).", partial(headline_panels, summary))]}
    for bench, conds in conditions.groupby(conditions["benchmark"].astype(str), sort=True):
        items = [] if conds["asymmetry"].isna().all() else [  # a design without both cued arms has none
            Image(out / f"heatmap-{_slug(bench)}.png", f"{bench}: asymmetry by factor × influence per model.",
                  partial(asymmetry_heatmaps, conds, bench, alpha=alpha))]
        levels = compared_models(summary["benchmarks"][bench]["by"])
        if levels is not None:
            items.insert(0, Image(out / f"models-{_slug(bench)}.png", f"{bench}: headline figures per model.",
                                  partial(model_panels, levels, bench)))
        for model, sub in conds.groupby(model_label(conds), sort=True):
            title = f"{bench} · {model}"
            items.append(Image(out / f"forest-{_slug(bench)}-{_slug(model)}.png",
                               f"{title}: per-condition effects with 95% CIs.", partial(effect_forest, sub, title)))
        plots[bench] = items
    return plots
