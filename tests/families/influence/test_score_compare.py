"""Two models of one influence suite scored together: each pair's paired difference on both effects of every
condition recovers a planted difference (and calls the effect they share tied), checked against a direct
computation; the report shows them; one model's runs of two benchmarks get no comparisons."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from spec_audits.cli import main
from spec_audits.families.influence.score.synthetic import Design, write_run, write_suite

DESIGN = Design(sizes=tuple((k, k + 1) for k in range(1, 16)), samples=8)  # 30 prompts per arm


def _steered(factor: str, influence: str | None, condition: str) -> float:
    """P(B): 0.5, down by 0.3 toward A (effect toward A +0.3), down by 0.1 toward B (effect toward B -0.1)."""
    return {"baseline": 0.5, "toward_A": 0.2, "toward_B": 0.4}[condition]


def _flat(factor: str, influence: str | None, condition: str) -> float:
    return {"baseline": 0.5, "toward_A": 0.5, "toward_B": 0.4}[condition]


def _spec(*args: str) -> None:
    result = CliRunner().invoke(main, list(args))
    assert result.exit_code == 0 and result.exception is None, result.output


@pytest.fixture(scope="session")
def scored(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("influence-compare")
    rows = write_suite(folder / "suite", DESIGN)
    write_run(folder / "steered", folder / "suite", rows, _steered, model="m/steered", seed=1)
    write_run(folder / "flat", folder / "suite", rows, _flat, model="m/flat", seed=2)
    _spec("score", str(folder / "steered"), str(folder / "flat"), "-o", str(folder / "score"))
    return folder


def test_paired_differences_recover_the_planted_one(scored: Path) -> None:
    found = json.loads((scored / "score" / "summary.json").read_text())["comparisons"]
    rows = {r["statistic"]: r for r in found["rows"]}
    toward_a = rows["effect toward A: triage age / emotional"]
    toward_b = rows["effect toward B: triage age / emotional"]
    assert (toward_a["model_a"], toward_a["model_b"]) == ("m/steered", "m/flat")
    assert toward_a["low"] < 0.3 < toward_a["high"] and toward_a["significant"], toward_a
    assert toward_b["low"] < 0 < toward_b["high"] and toward_b["tied"], toward_b
    assert found["ties"] == {"effect toward B: triage age / emotional": [["m/steered", "m/flat"]]}


def test_the_difference_is_the_two_models_effects_apart(scored: Path) -> None:
    """A - B equals effect_A(steered) - effect_A(flat) as conditions.csv reports them."""
    conditions = pd.read_csv(scored / "score" / "conditions.csv")
    effect = conditions.set_index("model")["effect_A"]
    row = pd.read_csv(scored / "score" / "comparisons.csv").iloc[0]
    assert row["difference"] == pytest.approx(effect["m/steered"] - effect["m/flat"])
    assert np.isfinite(row["se"]) and row["clusters"] == 60  # 30 baseline and 30 directed prompts, both models


def test_the_report_shows_the_comparisons(scored: Path) -> None:
    _spec("report", str(scored / "score"))
    report = (scored / "score" / "report.md").read_text()
    assert "## Paired model comparisons" in report
    assert "| effect toward A: triage age / emotional | m/steered | m/flat |" in report
    assert (scored / "score" / "plots" / "model_comparisons.png").is_file()


def test_one_models_runs_are_not_compared(tmp_path: Path) -> None:
    rows = write_suite(tmp_path / "suite", DESIGN)
    write_run(tmp_path / "one", tmp_path / "suite", rows, _flat, model="m/flat", seed=1)
    other = write_suite(tmp_path / "suite2", Design(benchmark="bbq", sizes=DESIGN.sizes))
    write_run(tmp_path / "two", tmp_path / "suite2", other, _flat, model="m/flat", seed=2)
    _spec("score", str(tmp_path / "one"), str(tmp_path / "two"), "-o", str(tmp_path / "score"))
    assert "comparisons" not in json.loads((tmp_path / "score" / "summary.json").read_text())
    assert not (tmp_path / "score" / "comparisons.csv").exists()
