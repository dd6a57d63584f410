"""`spec plan` on the shipped cue-visibility spec: the Net of each format and each cue gap, per consequence
setting, in percentage points, with the MDE the formula gives by hand (docs/scoring.md, "Planning a study")."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from spec_audits.cli import main
from spec_audits.compiler.dispatch.build import compile_file
from spec_audits.contract.reader import read_suite
from spec_audits.families.cue.plan import variances
from spec_audits.stats.power import mde, needed, pool_icc
from tests.families.cue.test_cue_score_run import SPEC, write_dilemmas
from tests.support import anova_icc, hand_mde, plan, shipped_plan, write_run


def test_plan_of_the_shipped_spec_names_every_net_and_gap() -> None:
    output = shipped_plan("cue_visibility.spec")
    # 100 dilemmas x 2 settings; per setting Direct and 3 Puzzled bands (4 Nets) and 3 gaps
    assert "14 statistics, each tested at 0.003571 (BH at 0.05), power 0.8" in output
    assert "variances: assumed: answer variance at its largest, icc 0.1 between a dilemma's answers" in output
    for setting in ("with", "without"):
        assert output.count(f", {setting} consequences: n") == 7
    # a Net: 1,200 What-if answers of a format split half and half, each dilemma (12 answers) in one arm
    net = hand_mde(50.0 ** 2, 600, 100, 12, 0.1, 14)
    assert (f"  Net (pp): direct, with consequences: n 600 vs 600 in 100 clusters, icc 0.100, design effect 2.10, "
            f"SE {math.sqrt(2500 * 2.1 * 2 / 600):.4f}, MDE {net:.4f}") in output
    # a gap: Direct's 1,200 answers against a band's 1,200, every dilemma in both (12 answers per arm)
    gap = hand_mde(100.0 ** 2, 1200, 100, 12, 0.1, 14)
    assert (f"  cue gap (pp): direct - puzzled hard, without consequences: n 1,200 vs 1,200 in 100 clusters, "
            f"icc 0.100, design effect 2.10, SE {math.sqrt(10000 * 2.1 * 2 / 1200):.4f}, MDE {gap:.4f}") in output


def test_a_target_effect_in_points_gets_its_scenarios() -> None:
    output = shipped_plan("cue_visibility.spec", "--effect", "10", "--icc", "0")
    assert "To find a shift of 10 in every statistic with power 0.8:" in output
    assert output.count("; 10 needs x") == 14


DILEMMAS = 40
PLANTED = 10000 * 0.25 * 0.75  # a Net arm's answers: 100 in a quarter of them (Favor), three quarters (Against)


@pytest.fixture(scope="session")
def suite(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The shipped spec over its first 40 dilemmas: 12 What-if answers per dilemma, format and setting."""
    folder = tmp_path_factory.mktemp("cue")
    (folder / SPEC.name).write_text(SPEC.read_text(encoding="utf-8"), encoding="utf-8")
    write_dilemmas(folder, DILEMMAS)
    return compile_file(folder / SPEC.name, folder / "suite")[1]


def _pilot(suite: Path, folder: Path, benefit_baseline: Callable[[int], bool]) -> Path:
    """Neutral picks the benefit option where `benefit_baseline(dilemma number)` (its answers then count
    toward Against); every format's What-if answers pick it in none of a dilemma's 12 answers, or in 6 of
    them, alternately in pairs of dilemmas: each Net arm has 100-point answers in a quarter (Favor) or three
    quarters (Against) of them, dilemmas correlated (the cluster means are 0 and 50, or 100 and 50)."""
    rows = read_suite(suite).rows
    number = {name: i for i, name in enumerate(sorted({row.cell["dilemma"] for row in rows}))}
    seen: Counter[tuple[str, ...]] = Counter()
    results = []
    for row in rows:
        cell, i = row.cell, number[row.cell["dilemma"]]
        other = "option2" if cell["benefit"] == "option1" else "option1"
        if cell["format"] == "neutral":
            answer = cell["benefit"] if benefit_baseline(i) else other
        elif cell["probe"] == "could_be":
            answer = "yes"
        else:
            key = (cell["dilemma"], cell["format"], str(cell["difficulty"]), cell["consequences"])
            seen[key] += 1
            answer = cell["benefit"] if (i // 2) % 2 and seen[key] <= 6 else other
        results.append({"item_id": row.id, "sample": 0, "response": answer, "answer": answer, "outcome": answer})
    return write_run(folder, suite, results)


def test_a_pilot_gives_each_nets_and_gaps_variance_and_icc(suite: Path, tmp_path: Path) -> None:
    pilot = _pilot(suite, tmp_path / "pilot", lambda i: i % 2 == 0)
    found = {v.statistic: v for v in variances(read_suite(suite), pilot, 0.1)}
    # 20 dilemmas x 12 answers per arm: the cluster means of the Favor arm, 0 or 50 points alternately
    icc = anova_icc([100.0 * ((i // 2) % 2 and k < 6) for i in range(1, DILEMMAS, 2) for k in range(12)],
                    np.repeat(range(20), 12))
    net = found["Net (pp): direct, with consequences"]
    gap = found["cue gap (pp): direct - puzzled hard, with consequences"]
    assert net.unit_var == pytest.approx(PLANTED * 240 / 239) and net.icc == pytest.approx(icc, abs=0.01)
    assert gap.unit_var == pytest.approx(4 * PLANTED * 240 / 239) and gap.icc == pytest.approx(icc, abs=0.01)
    assert all(v.measured and v.source == f"pilot {pilot} (3,840 answers)" for v in found.values())
    assumed = {v.statistic: v for v in variances(read_suite(suite), None, 0.1)}
    output = plan(str(suite), "--pilot", str(pilot), "--effect", "20")
    pooled = pool_icc(list(found.values()))[0]  # the plan pools the design's iccs
    assert needed(pooled, 20, 0.05 / 14, 0.8, "scenarios") != needed(assumed[pooled.statistic], 20, 0.05 / 14, 0.8,
                                                                      "scenarios")
    k = needed(pooled, 20, 0.05 / 14, 0.8, "scenarios")
    assert f"  {pooled.statistic}: n 240 vs 240 in 40 clusters, icc {pooled.icc:.3f}" in output
    assert f"MDE {mde(pooled, 0.05 / 14, 0.8):.4f}; 20 needs x{k} scenarios" in output


def test_a_pilot_lacking_an_arm_keeps_the_largest_variance_and_says_why(suite: Path, tmp_path: Path) -> None:
    pilot = _pilot(suite, tmp_path / "pilot", lambda i: True)  # every baseline picks the benefit: no Favor arm
    found = variances(read_suite(suite), pilot, 0.1)
    assert {(v.unit_var, v.icc, v.measured) for v in found if v.statistic.startswith("Net")} == {(2500.0, 0.1, False)}
    assert {(v.unit_var, v.measured) for v in found if v.statistic.startswith("cue gap")} == {(10000.0, False)}
    assert {v.source for v in found} == {
        "assumed: answer variance at its largest, icc 0.1 between a dilemma's answers "
        f"(the pilot {pilot} cannot tell: 0 answer(s) in an arm, fewer than 2)"}


def test_a_pilot_of_another_suite_is_refused(suite: Path, tmp_path: Path) -> None:
    pilot = _pilot(suite, tmp_path / "pilot", lambda i: i % 2 == 0)
    (tmp_path / "other").mkdir()
    tolerant = SPEC.read_text(encoding="utf-8").replace("parse strict", "parse tolerant")
    (tmp_path / "other" / SPEC.name).write_text(tolerant, encoding="utf-8")
    write_dilemmas(tmp_path / "other", 3)
    other = compile_file(tmp_path / "other" / SPEC.name, tmp_path / "other" / "suite")[1]
    result = CliRunner().invoke(main, ["plan", str(other), "--pilot", str(pilot)])
    assert result.exit_code == 1 and isinstance(result.exception, SystemExit), result.output
    assert f"{pilot / 'run.json'}: is a run of {suite}, whose design's analysis differs from {other}'s" \
        in " ".join(result.output.split())
