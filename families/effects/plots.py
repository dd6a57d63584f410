"""PNG plots of an effects score (matplotlib, Agg): a forest plot of the contrasts and a heatmap of the
per-scenario shifts."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from spec_audits.sdk import (
    NO_DATA,
    cannot_draw,
    no_data_background,
    pyplot,
    text_colour,
    write_figure,
)

PP_UNIT = "percentage points"  # a shift in P times 100: drawn with one decimal


HEATMAP_ROWS = 60  # scenarios a heatmap draws at most


def slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", text).strip("_") or "model"


def _save(fig: Any, path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    write_figure(fig, path, dpi=110, bbox_inches="tight")
    pyplot().close(fig)
    return path


def forest(contrasts: list[dict[str, Any]], labels: list[str], title: str, unit: str, path: Path) -> Path:
    """Each contrast's shift against its reference (in `unit`) with its interval, labelled by `labels`; an
    absent one is listed, unmarked."""
    fig, ax = pyplot().subplots(figsize=(7, 1.2 + 0.26 * max(len(contrasts), 1)))
    if not contrasts:
        cannot_draw(ax, title, "no contrasts (one level per factor and no intervention)")
        return _save(fig, path)
    y = np.arange(len(contrasts))
    shift = np.array([c.get("shift", np.nan) for c in contrasts], dtype=float)
    low = np.array([c.get("low", np.nan) for c in contrasts], dtype=float)
    high = np.array([c.get("high", np.nan) for c in contrasts], dtype=float)
    colours = ["tab:red" if c.get("significant") else "tab:blue" for c in contrasts]
    ok = np.isfinite(low) & np.isfinite(high)
    ax.hlines(y[ok], low[ok], high[ok], colors=np.array(colours)[ok], lw=1.5)
    ax.scatter(shift, y, c=colours, s=14, zorder=3)
    ax.axvline(0, color="grey", lw=0.8)
    ax.set_yticks(y, labels, fontsize=9)
    ax.invert_yaxis()
    ax.set(xlabel=f"shift against the reference ({unit}); {legend(contrasts)}", title=title)
    return _save(fig, path)


def _largest(scenarios: pd.DataFrame, title: str) -> tuple[pd.DataFrame, str]:
    """The HEATMAP_ROWS scenarios of the largest mean |shift| (in their order) and the title saying so, or all."""
    count = scenarios["scenario"].nunique()
    if count <= HEATMAP_ROWS:
        return scenarios, title
    size = scenarios.assign(size=scenarios["shift"].abs()).groupby("scenario", sort=False)["size"].mean()
    kept = set(size.nlargest(HEATMAP_ROWS).index)
    return (scenarios[scenarios["scenario"].isin(kept)],
            f"{title}: the {HEATMAP_ROWS} of {count:,} scenarios of the largest mean |shift|")


def legend(contrasts: list[dict[str, Any]]) -> str:
    """What the forest plot's colours mean, true of this plot: red is named only when a contrast is red."""
    if any(c.get("significant") for c in contrasts):
        return "red: significant after BH-FDR, blue: not"
    return "none significant after BH-FDR (all blue)"


def heatmap(scenarios: pd.DataFrame, title: str, unit: str, path: Path) -> Path:
    """Scenario x contrast: each level's shift against its reference in that scenario, in `unit` (percentage
    points, one decimal; a value, two). Of more than HEATMAP_ROWS scenarios, those with the largest mean |shift|
    are drawn (the title says how many of how many): a figure grows with its rows, and a thousand are unreadable."""
    scenarios, title = _largest(scenarios, title)
    fig, ax = pyplot().subplots(figsize=(2.5 + 0.55 * max(scenarios["label"].nunique(), 1),
                                    1.8 + 0.32 * max(scenarios["scenario"].nunique(), 1)))
    if scenarios.empty:
        cannot_draw(ax, title, "no scenario has answers at both a level and its reference")
        return _save(fig, path)
    table = scenarios.pivot_table(index="scenario", columns="label", values="shift", sort=False)
    values = table.to_numpy(dtype=float)
    bound = float(np.nanmax(np.abs(values))) or 1.0
    no_data_background(ax)
    image = ax.imshow(np.ma.masked_invalid(values), cmap="RdBu_r", vmin=-bound, vmax=bound, aspect="auto")
    ax.set_xticks(range(table.shape[1]), table.columns, rotation=60, ha="right", fontsize=9)
    ax.set_yticks(range(table.shape[0]), table.index, fontsize=9)
    if values.size <= 400:
        for (i, j), v in np.ndenumerate(values):
            if np.isfinite(v):
                ax.text(j, i, f"{v:+.{1 if unit == PP_UNIT else 2}f}", ha="center", va="center", fontsize=8,
                        color=text_colour(tuple(map(float, image.cmap(image.norm(v))))))
    fig.colorbar(image, ax=ax, shrink=0.8, label=f"shift against the reference ({unit})")
    ax.set_title(f"{title} ({NO_DATA})")
    return _save(fig, path)
