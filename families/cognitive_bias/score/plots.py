"""The three 9x9 heatmaps (Δn, δ, Δb) on a fixed [-0.3, 0.3] scale, and the DiD/SCM panel."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
matplotlib.rcParams["text.parse_math"] = False  # a name with $...$ in it is text, never TeX
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from spec_audits.families.cognitive_bias.score.tables import matrix  # noqa: E402
from spec_audits.sdk import (  # noqa: E402
    NO_DATA,
    cannot_draw,
    no_data_background,
    write_figure,  # noqa: E402
)

TITLES = {"presence": "Presence Δn", "content": "Content δ", "total": "Total Δb"}
SCALE = 0.3


def plot_heatmaps(tables: dict[str, pd.DataFrame], model: str, order: list[str], path: Path) -> None:
    fig, axes = plt.subplots(1, 3, figsize=(18, 6), constrained_layout=True)
    image = None
    for ax, (effect, table) in zip(axes, tables.items(), strict=True):
        grid = matrix(table[table["model"] == model] if "model" in table else table, order)
        no_data_background(ax)  # a cell without a mean (n < 1) shows hatched grey, never the white of 0
        image = ax.imshow(np.ma.masked_invalid(grid), cmap="RdBu_r", vmin=-SCALE, vmax=SCALE)
        ax.set_title(TITLES[effect])
        ax.set_xticks(range(len(order)), order, rotation=60, ha="right", fontsize=7)
        ax.set_yticks(range(len(order)), order, fontsize=7)
        ax.set_xlabel("human bias γ")
    axes[0].set_ylabel("target bias β")
    assert image is not None  # three tables on three axes (the zip is strict)
    fig.colorbar(image, ax=axes, shrink=0.7)
    fig.suptitle(f"Conditional-bias effects: {model} ({NO_DATA})")
    write_figure(fig, path, dpi=110)
    plt.close(fig)


def plot_causal(causal: pd.DataFrame, scm_table: pd.DataFrame, path: Path) -> None:
    fig, (left, right) = plt.subplots(1, 2, figsize=(12, 4.5), constrained_layout=True)
    _did_panel(left, causal)
    _scm_panel(right, scm_table)
    write_figure(fig, path, dpi=110)
    plt.close(fig)


def _did_panel(ax: plt.Axes, causal: pd.DataFrame) -> None:
    title = "DiD ATT with 95% CI (scenario-clustered)"
    drawn = causal.dropna(subset=["att"])
    if drawn.empty:
        cannot_draw(ax, title, "DiD needs at least 2 units with all three conditions answered")
        return
    labels = [f"{r.model}\n{r.variant}" for r in drawn.itertuples()]
    errors = (drawn["ci_high"] - drawn["att"]).fillna(0)
    ax.errorbar(range(len(drawn)), drawn["att"], yerr=errors, fmt="o", capsize=4)
    ax.axhline(0, color="grey", lw=0.8)
    ax.set_xticks(range(len(drawn)), labels, fontsize=7)
    ax.set_title(title)


def _scm_panel(ax: plt.Axes, scm_table: pd.DataFrame) -> None:
    title = "SCM gap per target bias (placebo p in scm.csv)"
    drawn = scm_table.dropna(subset=["gap"])
    if drawn.empty:
        cannot_draw(ax, title, "the synthetic control needs, for a target bias, its diagonal cell and at least\n"
                               "2 donor cells (other human biases) with scored rows")
        return
    ax.barh(drawn["target_bias"].astype(str) + " · " + drawn["model"].astype(str), drawn["gap"])
    ax.axvline(0, color="grey", lw=0.8)
    ax.set_title(title)
    ax.tick_params(axis="y", labelsize=7)
