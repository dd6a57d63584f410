"""`spec plan` on the shipped conditional-bias spec: Table 1's Δn, δ and Δb, each a one-sample t over one
difference per bank row, with the MDE the formula gives by hand (docs/scoring.md, "Planning a study")."""

from __future__ import annotations

import hashlib
import math
import shutil
from collections.abc import Callable
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner

from spec_audits.cli import main
from spec_audits.compiler.dispatch.build import compile_file
from spec_audits.contract.reader import read_suite
from spec_audits.contract.suite_model import SuiteRow
from spec_audits.families.cognitive_bias.plan import variances
from spec_audits.families.cognitive_bias.score.compare import NAMES
from tests.support import ROOT, effects_pilot, hand_mde, plan, shipped_plan, write_run

SPEC = ROOT / "specs" / "cognitive_bias.spec"


def test_plan_of_the_shipped_spec_gives_table_1s_effects() -> None:
    output = shipped_plan("cognitive_bias.spec")
    assert "3 statistics, each tested at 0.01667 (BH at 0.05), power 0.8" in output
    assert "variances: assumed: per-row difference variance at its largest (1), one difference per bank row" \
        in output
    # 53 bank rows: var(mean d) = 1 / 53 = 1/2 (1/53 + 1/53), no design effect, 52 df
    mde = hand_mde(0.5, 53, 53, 1, 0.1, 3)
    for name in ("Δn (presence): neutral turn - zero shot", "δ (content): biased turn - neutral turn",
                 "Δb (total): biased turn - zero shot"):
        assert (f"  {name}: n 53 vs 53 in 53 clusters, icc 0.100, design effect 1.00, "
                f"SE {math.sqrt(1 / 53):.4f}, MDE {mde:.4f}") in output


@pytest.fixture(scope="session")
def suite(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("bias")
    shutil.copytree(SPEC.parent / "data" / "cognitive_bias", folder / "data" / "cognitive_bias")
    (folder / SPEC.name).write_text(SPEC.read_text(encoding="utf-8"), encoding="utf-8")
    return compile_file(folder / SPEC.name, folder / "suite")[1]


def _answer(row: SuiteRow) -> str:
    """A deterministic spread of the displayed options."""
    return str(1 + hashlib.sha256(row.id.encode()).digest()[1] % len(row.answers))


def _pilot(suite: Path, folder: Path, keep: Callable[[SuiteRow], bool] = lambda row: True) -> Path:
    return write_run(folder, suite, [{"item_id": row.id, "sample": 0, "response": _answer(row), "answer": _answer(row),
                                      "outcome": row.answers.get(_answer(row))}
                                     for row in read_suite(suite).rows if keep(row)])


def test_a_pilot_gives_half_the_variance_of_its_rows_differences(suite: Path, tmp_path: Path) -> None:
    pilot = _pilot(suite, tmp_path / "pilot")
    scored = CliRunner().invoke(main, ["score", str(pilot), "-o", str(tmp_path / "score")])
    assert scored.exit_code == 0 and scored.exception is None, scored.output
    rows = pd.read_csv(tmp_path / "score" / "rows.csv")  # the scorer's own differences, one per bank row
    found = variances(read_suite(suite), pilot, 0.1)
    output = plan(str(suite), "--pilot", str(pilot))
    assert f"variances: pilot {pilot} ({len(read_suite(suite).rows):,} answers)" in output
    for v, column in zip(found, NAMES, strict=True):
        half = float(rows[column].var(ddof=1)) / 2
        assert v.unit_var == pytest.approx(half) and v.icc == 0.0 and not v.measured
        assert half < 0.5  # below the largest, so the plan's MDE falls with it
        assert (f"  {v.statistic}: n 53 vs 53 in 53 clusters, icc 0.000, design effect 1.00, "
                f"SE {math.sqrt(2 * half / 53):.4f}, MDE {hand_mde(half, 53, 53, 1, 0, 3):.4f}") in output


def test_a_pilot_of_one_bank_row_keeps_the_largest_variance_and_says_why(suite: Path, tmp_path: Path) -> None:
    first = next(row.meta["bank_row"] for row in read_suite(suite).rows if (row.meta or {}).get("bank_row"))
    pilot = _pilot(suite, tmp_path / "pilot", lambda row: (row.meta or {}).get("bank_row") in (None, first))
    found = variances(read_suite(suite), pilot, 0.1)
    assert {(v.unit_var, v.icc, v.source) for v in found} == {
        (0.5, 0.1, "assumed: per-row difference variance at its largest (1), one difference per bank row "
                   f"(the pilot {pilot} cannot tell: 1 bank row(s) with this difference, fewer than 2)")}


def test_a_pilot_of_another_family_is_refused(suite: Path, tmp_path: Path) -> None:
    pilot = effects_pilot(tmp_path)
    result = CliRunner().invoke(main, ["plan", str(suite), "--pilot", str(pilot)])
    assert result.exit_code == 1 and isinstance(result.exception, SystemExit), result.output
    assert f"{pilot / 'run.json'}: is not a run of a bias_decomposition design" in result.output
