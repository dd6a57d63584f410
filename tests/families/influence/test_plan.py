"""`spec plan` of an influence suite: both effects of every condition, sized from the suite's prompts and
samples, and from a synthetic pilot whose samples are independent (its correlation comes out near 0)."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from spec_audits.cli import main
from spec_audits.contract.reader import read_suite
from spec_audits.families.influence.plan import variances
from spec_audits.families.influence.score.synthetic import Design, write_run, write_suite

DESIGN = Design(sizes=tuple((k, k + 1) for k in range(1, 11)), samples=4)  # 10 sizes x 2 orders per cell


def _plan(*args: str) -> str:
    result = CliRunner().invoke(main, ["plan", *args])
    assert result.exit_code == 0 and result.exception is None, result.output
    return result.output


def test_each_condition_has_both_effects_counted_from_the_suite(tmp_path: Path) -> None:
    write_suite(tmp_path / "suite", DESIGN)
    found = variances(read_suite(tmp_path / "suite"), None, 0.2)
    assert [v.statistic for v in found] == ["effect toward A: age / emotional", "effect toward B: age / emotional"]
    assert {(v.n1, v.n0, v.clusters, v.unit_var, v.icc) for v in found} == {(80, 80, 40, 0.25, 0.2)}
    assert found[0].design_effect() == pytest.approx(1 + 3 * 0.2)  # 4 samples of a prompt per arm and cluster


def test_a_pilot_with_independent_samples_gives_no_design_effect(tmp_path: Path) -> None:
    rows = write_suite(tmp_path / "suite", DESIGN)
    write_run(tmp_path / "pilot", tmp_path / "suite", rows, lambda factor, influence, condition: 0.5, seed=3)
    found = variances(read_suite(tmp_path / "suite"), tmp_path / "pilot", 0.2)
    assert all(v.icc < 0.1 and v.unit_var == pytest.approx(0.25, abs=0.02) for v in found), found
    output = _plan(str(tmp_path / "suite"), "--pilot", str(tmp_path / "pilot"), "--effect", "0.1")
    assert f"variances: pilot {tmp_path / 'pilot'} (240 answers)" in output
    assert "2 statistics, each tested at 0.025 (BH at 0.05)" in output
    assert "more samples per cell: x" in output
