"""The DiD/SCM figure: a panel without enough data says so inside its frame instead of an empty frame."""

from __future__ import annotations

import math
from pathlib import Path

import matplotlib.pyplot as plt
import pandas as pd
import pytest

from spec_audits.families.cognitive_bias.score import plots


def test_panels_without_data_say_why(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    drawn: list[plt.Figure] = []
    monkeypatch.setattr(plots.plt, "close", drawn.append)  # keep the figure to look at
    causal = pd.DataFrame([{"model": "m", "variant": v, "att": math.nan, "se": math.nan, "ci_low": math.nan,
                            "ci_high": math.nan, "n_rows": 1} for v in ("abs", "authors")])
    scm = pd.DataFrame(columns=["target_bias", "gap", "p_placebo", "donors", "model"])
    plots.plot_causal(causal, scm, tmp_path / "causal.png")
    left, right = drawn[0].axes
    assert (tmp_path / "causal.png").is_file()
    assert left.texts[0].get_text().startswith("not drawn:\nDiD needs at least 2 units")
    assert right.texts[0].get_text().startswith("not drawn:\nthe synthetic control needs")
    assert right.get_title() == "SCM gap per target bias (placebo p in scm.csv)"
    plt.close(drawn[0])


def test_drawn_panels_carry_no_explanation(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    drawn: list[plt.Figure] = []
    monkeypatch.setattr(plots.plt, "close", drawn.append)
    causal = pd.DataFrame([{"model": "m", "variant": "abs", "att": 0.1, "se": 0.05, "ci_low": 0.0, "ci_high": 0.2,
                            "n_rows": 9}])
    scm = pd.DataFrame([{"target_bias": "Anchoring", "gap": 0.2, "p_placebo": 0.5, "donors": 3, "model": "m"}])
    plots.plot_causal(causal, scm, tmp_path / "causal.png")
    assert all(not ax.texts for ax in drawn[0].axes)
    plt.close(drawn[0])
