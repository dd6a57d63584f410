"""Bar labels sit above their error bars, so an interval never strikes a value through; n/a is written; a
panel with no figure at all says why inside it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import matplotlib.pyplot as plt
import numpy as np
import pytest

from spec_audits.families.influence import plots
from spec_audits.families.influence.plots import SHIFT_LABELS, _bars


def test_each_label_sits_above_its_bar_and_its_interval() -> None:
    fig, ax = plt.subplots()
    _bars(ax, np.arange(3), [5.0, 12.0, None], [[2.0, 9.0], [10.0, 11.5], None], 0.5, "shift")
    labels = [(text.get_text(), text.xy[1]) for text in ax.texts]
    assert labels == [("5.0", 9.0), ("12.0", 12.0), ("n/a", 0.0)]
    assert all(text.get_va() == "bottom" and text.xyann == (0, 3) for text in ax.texts)
    plt.close(fig)


def _rate(rate: float | None, absent: str | None = None) -> dict[str, Any]:
    return {"rate": rate, "ci": None if rate is None else [rate / 2, rate], "absent": absent}


def test_a_headline_panel_with_no_figure_says_why_inside_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A design with no baseline-neutral condition: the asymmetry panel gives the reason, not an empty axis."""
    why = "no condition has baseline, toward_A and toward_B trials"
    shift = {"mean_pp": 10.0, "ci_pp": [5.0, 15.0]}
    headline = {"mean_abs_shift": dict.fromkeys(SHIFT_LABELS, shift),
                "asymmetry_among_neutral": {"binomial": {"raw": _rate(None, why), "bh": _rate(None, why)}},
                "backfire_among_significant": _rate(0.5)}
    figures: list[plt.Figure] = []
    monkeypatch.setattr(plots, "_save", lambda fig, path: figures.append(fig) or path)
    plots.headline_panels({"benchmarks": {"triage": {"headline": headline}}}, tmp_path / "headline.png")
    shift_ax, asymmetry_ax, backfire_ax = figures[0].axes
    assert [t.get_text() for t in asymmetry_ax.texts] == [
        "not drawn:\ntriage: no condition has baseline, toward_A\nand toward_B trials"]
    assert asymmetry_ax.get_title() == "Sig. asymmetry among baseline-neutral" and not asymmetry_ax.patches
    assert [t.get_text() for t in shift_ax.texts] == ["10.0"] * 3 and [t.get_text() for t in backfire_ax.texts] == [
        "50.0"]
    plt.close(figures[0])
