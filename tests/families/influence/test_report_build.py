"""Golden summary of a fixed counts table, and the HTML/Markdown report built from it."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from spec_audits.cli import main
from tests.support import FIXTURES

SCORE_FIXTURES = FIXTURES / "score"


def _close(actual: Any, expected: Any, path: str = "") -> None:
    if isinstance(expected, dict):
        assert set(actual) == set(expected), path
        for key in expected:
            _close(actual[key], expected[key], f"{path}.{key}")
    elif isinstance(expected, list):
        assert len(actual) == len(expected), path
        for i, (a, e) in enumerate(zip(actual, expected, strict=True)):
            _close(a, e, f"{path}[{i}]")
    elif isinstance(expected, float):
        # the mixed model's optimiser is the only source of platform-level float noise
        assert actual == pytest.approx(expected, rel=1e-4 if "regression" in path else 1e-9, abs=1e-12), path
    else:
        assert actual == expected, path


def test_golden_summary(golden_scored: Path) -> None:
    """conftest's golden_scored is `spec score --counts golden_counts.csv`."""
    actual = json.loads((golden_scored / "summary.json").read_text())
    _close(actual, json.loads((SCORE_FIXTURES / "golden_summary.json").read_text()))


def test_golden_headline_by_hand(golden_scored: Path) -> None:
    """Spot checks of the golden file against conditions.csv, computed independently with pandas."""
    import pandas as pd

    c = pd.read_csv(golden_scored / "conditions.csv")
    t = c[c.benchmark == "triage"]
    summary = json.loads((golden_scored / "summary.json").read_text())["benchmarks"]["triage"]["headline"]
    shifts = pd.concat([t.effect_A, t.effect_B]).abs()
    assert summary["mean_abs_shift"]["all"]["mean_pp"] == pytest.approx(100 * shifts.mean())
    neutral = t.p_baseline >= 0.05
    asym = summary["asymmetry_among_neutral"]["binomial"]["raw"]
    assert (asym["k"], asym["n"]) == (int((neutral & (t.p_asymmetry < 0.05)).sum()), int(neutral.sum()))
    sig = pd.concat([t.p_effect_A, t.p_effect_B]) < 0.05
    backfire = pd.concat([t.steerability_A, t.steerability_B]) < 0
    bf = summary["backfire_among_significant"]
    assert (bf["k"], bf["n"]) == (int((sig & backfire).sum()), int(sig.sum()))


def test_report_is_self_contained_with_plots(golden_scored: Path, tmp_path: Path) -> None:
    scored = Path(shutil.copytree(golden_scored, tmp_path / "scored"))
    result = CliRunner().invoke(main, ["report", str(scored)])
    assert result.exit_code == 0, result.output
    html = (scored / "report.html").read_text()
    md = (scored / "report.md").read_text()
    # headline + per benchmark (2): models compared, heatmap, 4 forests
    assert html.count("data:image/png;base64,") == len(list((scored / "plots").glob("*.png"))) == 13
    assert {p.name for p in (scored / "plots").glob("models-*.png")} == {"models-bbq.png", "models-triage.png"}
    assert not re.search(r'src="(?!data:)', html)
    summary = json.loads((scored / "summary.json").read_text())["benchmarks"]["triage"]["headline"]
    shift = summary["mean_abs_shift"]["all"]["mean_pp"]
    assert f"{shift:.1f} p" in md and f"{shift:.1f} p" in html
    assert "(14/75)" in md  # backfire among significant effects, triage
    for png in (scored / "plots").glob("*.png"):
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_report_without_score_files_exits_1(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["report", str(tmp_path)])
    assert result.exit_code == 1 and "summary.json" in result.output
