"""Counts tables: validation with file/row/column messages (exit 1), zeros and one-sided conditions."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from spec_audits.cli import main
from spec_audits.families.influence.score.counts import read_counts_csv
from spec_audits.families.influence.score.pipeline import score
from spec_audits.runner.score_input import ScoreInputError
from tests.support import FIXTURES

SCORE_FIXTURES = FIXTURES / "score"
HEADER = "benchmark,model,factor,influence,group_A,group_B,c_0_A,c_0_B,c_A_A,c_A_B,c_B_A,c_B_B"
GOOD = "triage,m,age,emotional,young,old,60,40,80,20,55,45"


def _score_csv(tmp_path: Path, text: str) -> str:
    """`spec score --counts` on `text`, which must fail with a usage error (exit 1); its output."""
    path = tmp_path / "counts.csv"
    path.write_text(text, encoding="utf-8")
    result = CliRunner().invoke(main, ["score", "--counts", str(path), "-o", str(tmp_path / "out")])
    assert result.exit_code == 1 and isinstance(result.exception, SystemExit), result.exception
    return result.output


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            f"{HEADER}\n{GOOD}\ntriage,m,age,survey,young,old,60,-1,80,20,55,45\n",
            "row 2, column 'c_0_B': count '-1' is negative",
        ),
        (
            f"{HEADER}\n{GOOD}\ntriage,m,age,survey,young,old,60,40,80.5,20,55,45\n",
            "row 2, column 'c_A_A': count '80.5' is not an integer",
        ),
        (
            f"{HEADER}\ntriage,m,age,survey,young,old,60,40,80,20,55,many\n",
            "row 1, column 'c_B_B': count 'many' is not a number",
        ),
        (
            f"{HEADER}\ntriage,m,age,survey,young,old,60,40,80,20,55,\n",
            "row 1, column 'c_B_B': count '' is not a number",
        ),
        (f"{HEADER}\ntriage,m,age,,young,old,60,40,80,20,55,45\n", "row 1, column 'influence': empty value"),
        (f"{HEADER}\n{GOOD}\n{GOOD}\n", "row 2: duplicate condition (same key columns as an earlier row)"),
    ],
)
def test_bad_rows_exit_1_naming_file_row_column(tmp_path: Path, text: str, message: str) -> None:
    assert _score_csv(tmp_path, text) == f"Error: {tmp_path / 'counts.csv'}, {message}\n"


def test_missing_columns_are_named(tmp_path: Path) -> None:
    output = _score_csv(tmp_path, "benchmark,model,factor,influence,group_A,group_B,c_0_A\nt,m,f,i,a,b,1\n")
    assert "counts.csv" in output and "c_0_B, c_A_A, c_A_B, c_B_A, c_B_B" in output


def test_zero_counts_stay_finite_and_arms_without_trials_are_absent(tmp_path: Path) -> None:
    counts = read_counts_csv(SCORE_FIXTURES / "zeros.csv")
    conditions = score(counts).conditions
    stat_columns = [c for c in conditions.columns if c.startswith(("steerability", "asymmetry", "normalized", "z_",
                                                                    "p_", "q_")) and "position" not in c]
    asked = conditions[["n_0", "n_A", "n_B"]].gt(0).all(axis=1).to_numpy()  # every arm has trials
    assert np.isfinite(conditions.loc[asked, stat_columns].to_numpy(float)).all()
    one_sided = conditions.iloc[0]  # every trial chose B in every condition
    assert one_sided.steerability_A == 0 and one_sided.steerability_B == 0 and one_sided.p_effect_A == 1.0
    assert one_sided.p_baseline == pytest.approx(2 * 0.5**100)
    flipped = conditions.iloc[1]  # baseline all A; cue toward B flips everything
    assert flipped.steerability_B == pytest.approx(2 * np.log(100.5 / 0.5))
    empty = conditions.iloc[3]  # no trials at all: nothing is made up from the Haldane half-counts
    assert conditions.loc[3, stat_columns].isna().all() and np.isnan(empty.f0_B)
    assert empty.absent.startswith("no baseline trials; no toward_A trials; no toward_B trials")
    assert pd.isna(empty.baseline_neutral) and pd.isna(empty.backfire_A)


def test_zeros_table_scores_through_the_cli(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["score", "--counts", str(SCORE_FIXTURES / "zeros.csv"), "-o", str(tmp_path)])
    assert result.exit_code == 0, result.output
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["count_source"] == "samples"
    assert "NaN" not in (tmp_path / "summary.json").read_text()


def test_display_order_columns_give_the_baseline_position(tmp_path: Path) -> None:
    """Optional c_0_Y_firstG columns: a baseline that picks the first-shown option 90% of the time."""
    table = tmp_path / "orders.csv"
    table.write_text("benchmark,model,factor,influence,group_A,group_B,c_0_A,c_0_B,c_A_A,c_A_B,c_B_A,c_B_B,"
                     "c_0_A_firstA,c_0_B_firstA,c_0_A_firstB,c_0_B_firstB\n"
                     "t,m,age,cue,young,old,50,50,60,40,40,60,45,5,5,45\n"
                     "t,m,age,hint,young,old,5,5,6,4,4,6,0,0,5,5\n", encoding="utf-8")
    row, one_order = score(read_counts_csv(table)).conditions.itertuples()
    assert row.p_baseline == 1.0 and row.position_0 == pytest.approx(0.9) and row.position_biased
    assert not row.baseline_neutral and row.absent == ""
    # a baseline asked in one order only (as a --limit subset leaves it): no position, so no neutrality
    assert pd.isna(one_order.position_0) and pd.isna(one_order.baseline_neutral) and one_order.p_baseline == 1.0
    assert one_order.absent == "position: baseline trials shown in one display order only, so neutrality is unknown"
    lacking = tmp_path / "three.csv"
    lacking.write_text("\n".join(line.rsplit(",", 1)[0] for line in table.read_text().splitlines()) + "\n",
                       encoding="utf-8")
    with pytest.raises(ScoreInputError, match="missing c_0_B_firstB"):
        read_counts_csv(lacking)


def test_extra_columns_become_keys() -> None:
    counts = read_counts_csv(SCORE_FIXTURES / "paper_tab13.csv")
    assert counts.keys == ["benchmark", "model", "reasoning", "factor", "influence"]
