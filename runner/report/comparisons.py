"""The paired model comparisons of a study (spec_audits/stats/paired.py), as any family's report shows them:
a table of every pair's difference on every statistic, and a forest plot of the differences."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from spec_audits.runner.files_out import write_figure
from spec_audits.runner.report import fmt
from spec_audits.runner.report.document import Block, Heading, Image, Paragraph, Table
from spec_audits.runner.report.plotting import cannot_draw, pyplot

VERDICT = {True: "tied", False: "differ", None: "untested"}


def comparison_blocks(found: dict[str, Any], plots_dir: Path,
                      shown: Callable[[str], str] = str) -> list[Block]:
    """summary.json's `comparisons` ({alpha, rows, ties}): a heading, a paragraph, the table and the plot;
    `shown` is how the family names a statistic to a reader (e.g. levels by their text)."""
    rows = [{**r, "statistic": shown(r["statistic"])} for r in found["rows"]]
    level = f"{100 * (1 - found['alpha']):.0f}%"
    table = Table(["statistic", "model A", "model B", "A - B", "interval", "q (BH)", "verdict"],
                  [[r["statistic"], r["model_a"], r["model_b"], fmt.num(r["difference"], 3),
                    _interval(r["low"], r["high"]), fmt.num(r["q"], 3) + (" *" if r.get("significant") else ""),
                    VERDICT[r["tied"]]] for r in rows])
    return [Heading("Paired model comparisons"),
            Paragraph(f"Each pair of models' difference on every statistic, paired by the clusters both answered, "
                      f"with {level} intervals clustered by scenario (or prompt) and BH-FDR across all "
                      "comparisons; tied: not significantly different."), table,
            Image(plots_dir / "model_comparisons.png",
                  f"Model A minus model B on each statistic with {level} paired intervals; {_legend(rows)}.",
                  partial(forest, rows))]


def _legend(rows: list[dict[str, Any]]) -> str:
    """What the plot's colours mean, as true of this plot (no "red" when nothing is red)."""
    if any(r.get("significant") for r in rows):
        return "red: significant after BH-FDR, blue: not"
    return "none is significant after BH-FDR (all blue)"


def forest(rows: list[dict[str, Any]], path: Path) -> Path:
    """Each comparison's difference with its interval, one line per (statistic, pair)."""
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(7, 1.2 + 0.26 * max(len(rows), 1)))
    if not rows:
        cannot_draw(ax, "Paired differences between models", "no statistic both models have")
    else:
        y = np.arange(len(rows))
        diff, low, high = (np.array([np.nan if r[key] is None else r[key] for r in rows], dtype=float)
                           for key in ("difference", "low", "high"))
        colours = np.array(["tab:red" if r.get("significant") else "tab:blue" for r in rows])
        ok = np.isfinite(low) & np.isfinite(high)
        ax.hlines(y[ok], low[ok], high[ok], colors=colours[ok], lw=1.5)
        ax.scatter(diff, y, c=colours, s=14, zorder=3)
        ax.axvline(0, color="grey", lw=0.8)
        ax.set_yticks(y, [f"{r['statistic']}: {r['model_a']} - {r['model_b']}" for r in rows], fontsize=7)
        ax.invert_yaxis()
        ax.set(xlabel=f"model A - model B; {_legend(rows)}", title="Paired differences between models")
    path.parent.mkdir(parents=True, exist_ok=True)
    write_figure(fig, path, dpi=110, bbox_inches="tight")
    plt.close(fig)
    return path


def _interval(low: float | None, high: float | None) -> str:
    return "" if low is None or high is None else f"[{low:.3f}, {high:.3f}]"
