"""Counts tables: validation with file/row/column messages (exit 1), zeros and one-sided conditions."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from families.influence.score.counts import read_counts_csv
from families.influence.score.pipeline import score
from runner.cli import main
from tests.support import FIXTURES

SCORE_FIXTURES = FIXTURES / "score"
HEADER = "benchmark,model,factor,influence,group_A,group_B,c_0_A,c_0_B,c_A_A,c_A_B,c_B_A,c_B_B"
GOOD = "triage,m,age,emotional,young,old,60,40,80,20,55,45"


def _score_csv(tmp_path: Path, text: str) -> tuple[int, str]:
    path = tmp_path / "counts.csv"
    path.write_text(text, encoding="utf-8")
    result = CliRunner().invoke(main, ["score", "--counts", str(path), "-o", str(tmp_path / "out")])
    return result.exit_code, result.output


@pytest.mark.parametrize(
    ("text", "row", "column", "problem"),
    [
        (f"{HEADER}\n{GOOD}\ntriage,m,age,survey,young,old,60,-1,80,20,55,45\n", 2, "c_0_B", "is negative"),
        (f"{HEADER}\n{GOOD}\ntriage,m,age,survey,young,old,60,40,80.5,20,55,45\n", 2, "c_A_A", "not an integer"),
        (f"{HEADER}\ntriage,m,age,survey,young,old,60,40,80,20,55,many\n", 1, "c_B_B", "not a number"),
        (f"{HEADER}\ntriage,m,age,survey,young,old,60,40,80,20,55,\n", 1, "c_B_B", "not a number"),
        (f"{HEADER}\ntriage,m,age,,young,old,60,40,80,20,55,45\n", 1, "influence", "empty value"),
        (f"{HEADER}\n{GOOD}\n{GOOD}\n", 2, None, "duplicate condition"),
    ],
)
def test_bad_rows_exit_1_naming_file_row_column(
    tmp_path: Path, text: str, row: int, column: str | None, problem: str
) -> None:
    code, output = _score_csv(tmp_path, text)
    assert code == 1
    assert "counts.csv" in output and f"row {row}" in output and problem in output
    if column:
        assert f"column '{column}'" in output
    assert "Traceback" not in output


def test_missing_columns_are_named(tmp_path: Path) -> None:
    code, output = _score_csv(tmp_path, "benchmark,model,factor,influence,group_A,group_B,c_0_A\nt,m,f,i,a,b,1\n")
    assert code == 1
    assert "counts.csv" in output and "c_0_B, c_A_A, c_A_B, c_B_A, c_B_B" in output


def test_zeros_and_one_sided_conditions_stay_finite(tmp_path: Path) -> None:
    counts = read_counts_csv(SCORE_FIXTURES / "zeros.csv")
    conditions = score(counts).conditions
    stat_columns = [
        c for c in conditions.columns if c.startswith(("steerability", "asymmetry", "normalized", "z_", "p_", "q_"))
    ]
    assert np.isfinite(conditions[stat_columns].to_numpy(float)).all()
    one_sided = conditions.iloc[0]  # every trial chose B in every condition
    assert one_sided.steerability_A == 0 and one_sided.steerability_B == 0 and one_sided.p_effect_A == 1.0
    assert one_sided.p_baseline == pytest.approx(2 * 0.5**100)
    flipped = conditions.iloc[1]  # baseline all A; cue toward B flips everything
    assert flipped.steerability_B == pytest.approx(2 * np.log(100.5 / 0.5))
    empty = conditions.iloc[3]
    assert np.isnan(empty.f0_B) and empty.p_baseline == 1.0 and empty.asymmetry == 0


def test_zeros_table_scores_through_the_cli(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["score", "--counts", str(SCORE_FIXTURES / "zeros.csv"), "-o", str(tmp_path)])
    assert result.exit_code == 0, result.output
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["count_source"] == "samples"
    assert "NaN" not in (tmp_path / "summary.json").read_text()


def test_extra_columns_become_keys() -> None:
    counts = read_counts_csv(SCORE_FIXTURES / "paper_tab13.csv")
    assert counts.keys == ["benchmark", "model", "reasoning", "factor", "influence"]
