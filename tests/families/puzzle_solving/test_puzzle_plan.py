"""`spec plan` on the shipped puzzle-solving spec: each puzzle family and band's exact-match accuracy,
planned as the paired difference of two models on its puzzles, with the MDE the formula gives by hand; and
the paired comparisons of several models' accuracies (a planted difference found, equal models tied)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from spec_audits.cli import main
from spec_audits.compiler.dispatch.build import compile_file
from spec_audits.contract.reader import read_suite
from spec_audits.families.puzzle_solving.compare import model_comparisons
from spec_audits.families.puzzle_solving.plan import variances
from spec_audits.stats.power import mde, needed, pool_icc
from tests.families.puzzle_solving import TINY
from tests.support import anova_icc, effects_pilot, hand_mde, plan, shipped_plan, write_run


def test_plan_of_the_shipped_spec_gives_each_bands_accuracy() -> None:
    output = shipped_plan("puzzle_solving.spec")
    assert "5 statistics, each tested at 0.01 (BH at 0.05), power 0.8" in output
    assert "variances: assumed: answer variance at its largest (1/4), icc 0.1 between a puzzle's samples" in output
    # 5 puzzles of a family and band, one answer each per model: no design effect, 4 df
    mde = hand_mde(0.25, 5, 5, 1, 0.1, 5)
    assert (f"  exact-match accuracy: propositional easy, model vs model: n 5 vs 5 in 5 clusters, icc 0.100, "
            f"design effect 1.00, SE {math.sqrt(0.25 * 2 / 5):.4f}, MDE {mde:.4f}") in output
    assert output.count(", model vs model: n 5 vs 5 in 5 clusters") == 5


def _answers(model: str, solved: list[bool]) -> pd.DataFrame:
    return pd.DataFrame({"model": model, "family": "zebra", "band": "easy", "failed": False,
                         "item_id": [f"p{i:02d}" for i in range(len(solved))],
                         "outcome": ["solved" if s else "unsolved" for s in solved]})


def test_paired_comparisons_find_a_planted_difference_and_tie_equal_models() -> None:
    strong = [i % 5 != 0 for i in range(40)]  # 80% solved
    weak = [i % 5 == 1 for i in range(40)]  # 20%, on puzzles the strong model solves too
    equal = [i % 5 != 4 for i in range(40)]  # 80% like the strong one, on partly other puzzles
    table = pd.concat([_answers("a", strong), _answers("b", weak), _answers("c", equal)], ignore_index=True)
    found = {(r["model_a"], r["model_b"]): r for r in model_comparisons(table, 0.05)["rows"]}
    planted = found[("a", "b")]
    assert planted["difference"] == pytest.approx(0.6) and planted["clusters"] == 40
    # the paired t over puzzles: d = a - b is 1 on 24 puzzles of 40, 0 elsewhere
    d = [float(x) - float(y) for x, y in zip(strong, weak, strict=True)]
    se = pd.Series(d).std() / math.sqrt(40)
    assert planted["se"] == pytest.approx(se) and planted["low"] <= 0.6 <= planted["high"] and planted["significant"]
    assert found[("a", "c")]["difference"] == 0.0 and found[("a", "c")]["tied"] is True


SAMPLES = 8
PLANTED_ICC = anova_icc([i % 2 and s < 4 for i in range(30) for s in range(SAMPLES)], np.repeat(range(30), SAMPLES))


@pytest.fixture(scope="session")
def zebra_suite(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The tiny spec's zebra design with 30 puzzles per band, each asked 8 times."""
    folder = tmp_path_factory.mktemp("zebra")
    spec = TINY.replace("count 2 per band seed 5", f"count 30 per band seed 5\n  samples {SAMPLES}")
    (folder / "tiny.spec").write_text(spec[:spec.index("design logic")] + spec[spec.index("design rows"):],
                                      encoding="utf-8")
    compile_file(folder / "tiny.spec", folder / "suite")
    return folder / "suite"


def _pilot(suite: Path, folder: Path) -> Path:
    """Every other puzzle solved in 4 of its 8 samples, the others never: accuracy 1/4 and answer variance
    3/16 in both bands, a puzzle's samples correlated (PLANTED_ICC)."""
    results = [{"item_id": row.id, "sample": sample, "answer": outcome, "outcome": outcome, "solution": {}}
               for row in read_suite(suite).rows for sample in range(SAMPLES)
               for outcome in ["solved" if row.cell["index"] % 2 and sample < 4 else "unsolved"]]
    return write_run(folder, suite, results)


def test_a_pilot_gives_each_bands_variance_and_icc(zebra_suite: Path, tmp_path: Path) -> None:
    pilot = _pilot(zebra_suite, tmp_path / "pilot")
    found = variances(read_suite(zebra_suite), pilot, 0.1)
    assert [v.statistic for v in found] == ["exact-match accuracy: zebra easy, model vs model",
                                            "exact-match accuracy: zebra intermediate, model vs model"]
    for v in found:
        assert v.unit_var == pytest.approx(3 / 16 * 240 / 239)  # var(y, ddof=1) of the band's 240 answers
        assert v.icc == pytest.approx(PLANTED_ICC, abs=0.01) and v.measured
        assert v.source == f"pilot {pilot} (480 answers)"
    assumed = variances(read_suite(zebra_suite), None, 0.1)[0]
    planned = plan(str(zebra_suite), "--pilot", str(pilot), "--effect", "0.2")
    # the clustering the pilot measured outweighs its smaller answer variance: more puzzles than assumed
    assert found[0].se() > assumed.se()
    assert f"variances: pilot {pilot} (480 answers)" in planned
    assert f"model vs model: n 240 vs 240 in 30 clusters, icc {found[0].icc:.3f}" in planned
    k, before = (needed(v, 0.2, 0.05 / 2, 0.8, "scenarios") for v in (pool_icc(found)[0], assumed))
    assert f"MDE {mde(pool_icc(found)[0], 0.05 / 2, 0.8):.4f}; 0.2 needs x{k} scenarios" in planned and k != before


def test_a_band_the_pilot_did_not_reach_keeps_the_largest_variance_and_says_why(zebra_suite: Path,
                                                                               tmp_path: Path) -> None:
    easy = [row for row in read_suite(zebra_suite).rows if row.cell["band"] == "easy"]
    pilot = write_run(tmp_path / "pilot", zebra_suite, [
        {"item_id": row.id, "sample": 0, "answer": "solved", "outcome": ["solved", "unsolved"][i % 2],
         "solution": {}} for i, row in enumerate(easy)])
    found = {v.statistic: v for v in variances(read_suite(zebra_suite), pilot, 0.1)}
    hard = found["exact-match accuracy: zebra intermediate, model vs model"]
    assert (hard.unit_var, hard.icc, hard.measured) == (0.25, 0.1, False)
    assert hard.source == ("assumed: answer variance at its largest (1/4), icc 0.1 between a puzzle's samples "
                           f"(the pilot {pilot} cannot tell: 0 answer(s), fewer than 2)")
    assert found["exact-match accuracy: zebra easy, model vs model"].measured


def test_a_pilot_of_another_family_is_refused(zebra_suite: Path, tmp_path: Path) -> None:
    """A puzzle pilot is read for the bands it shares with the suite (the statistics are named by puzzle family
    and band); a run of another family's suite cannot give them: refused, located at its run.json."""
    pilot = effects_pilot(tmp_path)
    result = CliRunner().invoke(main, ["plan", str(zebra_suite), "--pilot", str(pilot)])
    assert result.exit_code == 1 and isinstance(result.exception, SystemExit), result.output
    assert f"{pilot / 'run.json'}: is not a run of a puzzle_solving design" in result.output
