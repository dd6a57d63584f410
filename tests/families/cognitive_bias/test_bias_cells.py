"""`spec score --cells` on tables of the released per-model shape (issue 20 item 8, issue 19 item 8).

The authors' per-model tables are not available here (docs/cognitive-bias.md), so these are built in
exactly their shape: one file per model, the released columns, 81 cells of which one has n = 0 (a pair
of biases with no scored rows: every statistic blank), two have n = 1 (blank sd, t and p) and one a
blank mean. Rows are planted so that each model's row-level content effect is Table 1's δ̄ and t(δ̄);
the cells alone must give them back, exactly as scipy gives them from the rows."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner
from scipy import stats

from spec_audits.cli import main

BIASES = ["Anchoring", "Availability Heuristic", "Bandwagon Effect", "Confirmation Bias", "Framing Effect",
          "In Group Bias", "Loss Aversion", "Planning Fallacy", "Status Quo Bias"]
TABLE1 = {  # model: (δ̄, t(δ̄)), seed 004's Table 1 (shared/methods/seed-004-cognitive-bias.md §6.1)
    "Llama-3.1-8B": (-0.035, -6.66), "Llama-3.1-70B": (-0.039, -7.62), "Claude-3.5-Haiku": (0.037, 4.998),
    "GPT-4o": (-0.020, -4.91), "DeepSeek-V3": (0.009, 1.81), "Qwen-2.5-72B": (-0.007, -1.37),
    "Phi-4": (-0.018, -3.86), "Gemma-2-9B-IT": (-0.028, -5.36),
}
EMPTY = ("Planning Fallacy", "Anchoring")  # n = 0
SINGLE = (("Anchoring", "Loss Aversion"), ("Status Quo Bias", "Status Quo Bias"))  # n = 1
BLANK_MEAN = ("Framing Effect", "In Group Bias")  # one row, its δ missing (an abstention)
RELEASED = ["target_bias", "human_bias", "n", "mean_delta", "std_delta", "t_stat", "p_value", "cohens_d",
            "significant_05", "p_bonferroni", "significant_bonferroni"]


def _planted_rows(mean: float, t: float, seed: int) -> pd.DataFrame:
    """Content effects per bank row (target, human, δ) whose mean is `mean` and one-sample t is `t`."""
    cells = [(a, b) for a in BIASES for b in BIASES if (a, b) not in (EMPTY, BLANK_MEAN)]
    sizes = [1 if cell in SINGLE else 300 for cell in cells]
    total = sum(sizes)
    z = np.random.default_rng(seed).standard_normal(total)
    z = (z - z.mean()) / z.std(ddof=1)
    spread = abs(mean) * math.sqrt(total) / abs(t)
    target, human = zip(*[cell for cell, size in zip(cells, sizes, strict=True) for _ in range(size)], strict=True)
    return pd.DataFrame({"target": target, "human": human, "delta": mean + spread * z})


def _released_table(rows: pd.DataFrame) -> pd.DataFrame:
    """The rows' cells as the authors' tables hold them (blank where a statistic is undefined)."""
    out: list[dict[str, Any]] = []
    for (target, human), group in rows.groupby(["target", "human"], sort=False):
        x = group["delta"].to_numpy()
        test = stats.ttest_1samp(x, 0.0) if len(x) > 1 else None
        sd = x.std(ddof=1) if len(x) > 1 else None
        out.append({"target_bias": target, "human_bias": human, "n": len(x), "mean_delta": x.mean(),
                    "std_delta": sd, "t_stat": test and test.statistic, "p_value": test and test.pvalue,
                    "cohens_d": sd and x.mean() / (sd + 1e-9)})
    out += [{"target_bias": EMPTY[0], "human_bias": EMPTY[1], "n": 0},
            {"target_bias": BLANK_MEAN[0], "human_bias": BLANK_MEAN[1], "n": 1}]
    table = pd.DataFrame(out)
    tested = table["p_value"].notna().sum()
    table["significant_05"] = table["p_value"] < 0.05
    table["p_bonferroni"] = (table["p_value"] * tested).clip(upper=1.0)
    table["significant_bonferroni"] = table["p_bonferroni"] < 0.05
    return table[RELEASED]


def _no_constants(name: str) -> None:
    raise AssertionError(f"JSON holds {name}")


@pytest.fixture(scope="session")
def released(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, pd.DataFrame]]:
    folder = tmp_path_factory.mktemp("released")
    tables = {}
    for seed, (model, (mean, t)) in enumerate(TABLE1.items()):
        rows = _planted_rows(mean, t, seed)
        path = folder / f"{model}.csv"
        _released_table(rows).to_csv(path, index=False)
        tables[model] = (path, rows)
    return tables


@pytest.mark.parametrize("model", list(TABLE1))
def test_cells_give_back_table1_from_the_released_tables_as_they_are(
        released: dict[str, tuple[Path, pd.DataFrame]], model: str, tmp_path: Path) -> None:
    path, rows = released[model]
    assert (pd.read_csv(path)["n"] == 0).sum() == 1  # the shape that exited 1 before
    result = CliRunner().invoke(main, ["score", "--cells", str(path), "-o", str(tmp_path)])
    assert result.exit_code == 0 and result.exception is None, result.output
    mean, t = TABLE1[model]
    line = result.output.splitlines()[0]
    assert line.startswith(f"{model}: pooled δ̄ = {mean:.4f} (t = {t:.2f}, N = {len(rows)}); ATT_unmatched = ")
    assert line.endswith("; 2 cell(s) skipped (n = 0: 1, blank mean: 1)")
    summary = json.loads((tmp_path / "cells_summary.json").read_text(), parse_constant=_no_constants)
    found = summary["models"][model]
    assert found["pooled"]["mean"] == pytest.approx(rows["delta"].mean(), abs=1e-12)
    assert found["pooled"]["t"] == pytest.approx(stats.ttest_1samp(rows["delta"], 0.0).statistic, rel=1e-9)
    assert (round(found["pooled"]["mean"], 3), round(found["pooled"]["t"], 2)) == (mean, round(t, 2))
    on = rows.loc[rows["target"] == rows["human"], "delta"]
    off = rows.loc[rows["target"] != rows["human"], "delta"]
    assert found["att_unmatched"] == pytest.approx(on.mean() - off.mean(), abs=1e-12)
    assert found["t_diagonal"] == pytest.approx(stats.ttest_ind(on, off).statistic, rel=1e-9)
    assert found["cells"] == 79 and found["skipped"] == [
        {"target_bias": EMPTY[0], "human_bias": EMPTY[1], "n": 0, "reason": "n = 0"},
        {"target_bias": BLANK_MEAN[0], "human_bias": BLANK_MEAN[1], "n": 1, "reason": "blank mean"}]


def test_names_stay_text_and_what_cells_cannot_support_is_absent_with_a_reason(tmp_path: Path) -> None:
    table = tmp_path / "cells.csv"
    table.write_text("model,target_bias,human_bias,n,mean_delta,std_delta\n"
                     "NaNo-7B,A,A,3,0.1,0.2\nNaNo-7B,A,B,4,0.3,0.1\n"
                     "NA,A,A,2,0.05,0\nNA,A,B,3,0.05,0\nNA,B,B,0,,\n"  # zero variance: a valid "no effect" table
                     "null,A,A,1,0.2,\nnull,B,A,1,,\n", encoding="utf-8")  # one usable row
    result = CliRunner().invoke(main, ["score", "--cells", str(table), "-o", str(tmp_path / "out")])
    assert result.exit_code == 0 and result.exception is None, result.output
    assert result.output.splitlines() == [
        "NA: pooled δ̄ = 0.0500 (t absent (zero variance: every row has the same value, so t is undefined), N = 5); "
        "ATT_unmatched = 0.0000; 1 cell(s) skipped (n = 0: 1)",
        "NaNo-7B: pooled δ̄ = 0.2143 (t = 3.29, N = 7); ATT_unmatched = -0.2000",
        "null: pooled δ̄ = 0.2000 (t absent (one scored row: no spread to test against), N = 1); ATT_unmatched = "
        "absent; 1 cell(s) skipped (blank mean: 1)",
        f"-> {tmp_path / 'out'}"]
    text = (tmp_path / "out" / "cells_summary.json").read_text()
    models = json.loads(text, parse_constant=_no_constants)["models"]
    assert set(models) == {"NaNo-7B", "NA", "null"}
    assert models["NA"]["pooled"] | {"mean": 0.05} == {
        "n": 5, "mean": 0.05, "sd": 0.0, "t": None, "p": None,
        "absent": {"t": "zero variance: every row has the same value, so t is undefined",
                   "p": "zero variance: every row has the same value, so t is undefined"}}
    assert models["null"]["absent"]["att_unmatched"] == "the diagonal or the off-diagonal cells have no scored rows"
    summary = pd.read_csv(tmp_path / "out" / "cells_summary.csv", keep_default_na=False)
    assert sorted(set(summary["model"])) == ["NA", "NaNo-7B", "null"]


def test_a_negative_sd_is_refused_with_its_row(tmp_path: Path) -> None:
    table = tmp_path / "cells.csv"
    table.write_text("target_bias,human_bias,n,mean_delta,std_delta\nA,A,3,0.1,0.2\nA,B,3,0.1,-0.2\n")
    result = CliRunner().invoke(main, ["score", "--cells", str(table)])
    assert result.exit_code == 1 and isinstance(result.exception, SystemExit)
    assert result.output == (f"Error: {table}, row 3, column 'std_delta': '-0.2' is negative (a standard "
                             "deviation cannot be)\n")


def test_a_cell_given_twice_is_refused_with_both_rows(tmp_path: Path) -> None:
    """Two lines for one (model, target, human) cell would be pooled twice (or contradict each other)."""
    table = tmp_path / "cells.csv"
    table.write_text("model,target_bias,human_bias,n,mean_delta,std_delta\nm1,A,A,3,0.1,0.2\nm2,A,A,3,0.1,0.2\n"
                     "m1,A,B,3,0.1,0.2\nm1,A,A,3,0.3,0.2\n")
    result = CliRunner().invoke(main, ["score", "--cells", str(table), "-o", str(tmp_path / "out")])
    assert result.exit_code == 1 and isinstance(result.exception, SystemExit)
    assert result.output == (f"Error: {table}, row 5: repeats the cell (m1, A, A) of row 2: one line per model, "
                             "target bias and human bias\n")
    assert not (tmp_path / "out").exists()
