"""Noise floor from baseline-replicate runs (methods §6.15, App. N, Tab. 19), on planted replicates.

Every expected figure below is worked out by hand from the planted counts, for both f0 definitions
(the paper's f0(B) and the release's key-second option) and both flip units (prompt, comparison).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from spec_audits.cli import main
from spec_audits.families.influence.score.noise import NoiseOptions, noise_floor, pair_replicates
from spec_audits.families.influence.score.runs import load_run
from spec_audits.families.influence.score.synthetic import Design, write_run, write_suite
from spec_audits.runner.score_input import ScoreInputError

DESIGN = Design(factors={"age": ("young", "old")}, influences=("emotional",), sizes=((1, 2), (2, 1), (3, 3)),
                samples=4)
# B choices of 4 per baseline prompt (n_A, n_B, order). Original: 14 of 24 choose old (B).
ORIGINAL = {(1, 2, "AB"): 4, (1, 2, "BA"): 3, (2, 1, "AB"): 0, (2, 1, "BA"): 1, (3, 3, "AB"): 2, (3, 3, "BA"): 4}
# Replicate: 8 of 24 choose B -> paper drift |8 - 14| / 24 = 25 p. The release's f0 counts the key's second
# option: the larger group, and on equal sizes young (the level name sorting after "old"): original
# 4+3 + 4+3 + 2+0 = 16 of 24, replicate 3+0 + 3+4 + 0+4 = 14 -> 8.333 p. Prompt majorities: (1,2,BA) B -> A
# and (3,3,BA) B -> A flip, (3,3,AB) ties in the original: 2 of 5. Comparisons pooled over orders: (1,2)
# B 7/8 -> 3/8 flips, (2,1) stays A, (3,3) 6/8 -> 4/8 ties: 1 of 2.
REPLICATE = {(1, 2, "AB"): 3, (1, 2, "BA"): 0, (2, 1, "AB"): 1, (2, 1, "BA"): 0, (3, 3, "AB"): 4, (3, 3, "BA"): 0}


def _plant(run_dir: Path, suite: dict[str, dict[str, Any]], counts: dict[tuple[Any, ...], int]) -> None:
    """Rewrite the run's baseline answers: sample s chooses group B when s < the planted count."""
    path = run_dir / "results.jsonl"
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    for row in rows:
        cell = suite[row["item_id"]]["cell"]
        if cell["condition"] == "baseline":
            chose_b = row["sample"] < counts[(cell["n_A"], cell["n_B"], cell["order"])]
            row["outcome"] = cell["group_B"] if chose_b else cell["group_A"]
            row["answer"] = next(t for t, g in suite[row["item_id"]]["answers"].items() if g == row["outcome"])
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))


def _study(tmp_path: Path, cached: bool = False) -> tuple[list[Path], list[Path]]:
    """Two models' original runs and their baseline replicates: m1 with the planted counts, m2 identical."""
    rows = write_suite(tmp_path / "suite", DESIGN)
    suite = {json.loads(x)["id"]: json.loads(x) for x in (tmp_path / "suite" / "suite.jsonl").read_text().splitlines()}
    base = [row for row in rows if row.cell["condition"] == "baseline"]
    originals, replicates = [], []
    for model, planted in (("m1", REPLICATE), ("m2", ORIGINAL)):
        write_run(tmp_path / model, tmp_path / "suite", rows, lambda f, i, c: 0.5, model=model)
        write_run(tmp_path / f"{model}-rep", tmp_path / "suite", base, lambda f, i, c: 0.5, model=model, seed=9)
        _plant(tmp_path / model, suite, ORIGINAL)
        _plant(tmp_path / f"{model}-rep", suite, planted)
        if cached:
            path = tmp_path / f"{model}-rep" / "results.jsonl"
            lines = [json.loads(line) | {"cached": True} for line in path.read_text().splitlines()]
            path.write_text("".join(json.dumps(line) + "\n" for line in lines))
        originals.append(tmp_path / model)
        replicates.append(tmp_path / f"{model}-rep")
    return originals, replicates


@pytest.mark.parametrize(("f0", "flips", "drift", "flip_rate"), [
    ("paper", "prompt", 25.0, 2 / 5),
    ("release", "prompt", 100 / 12, 2 / 5),
    ("paper", "comparison", 25.0, 1 / 2),
    ("release", "comparison", 100 / 12, 1 / 2),
])
def test_planted_replicate_gives_the_hand_figures(tmp_path: Path, f0: str, flips: str, drift: float,
                                                  flip_rate: float) -> None:
    originals, replicates = _study(tmp_path)
    pairs = pair_replicates([load_run(p) for p in originals], [load_run(p) for p in replicates])
    floor = noise_floor(pairs, NoiseOptions(f0=f0, flips=flips))["triage"]  # type: ignore[arg-type]
    assert floor["by_model"] == {"m1": {"cells": 1, "mean_abs_drift_pp": pytest.approx(drift),
                                        "mean_flip_rate": pytest.approx(flip_rate)},
                                 "m2": {"cells": 1, "mean_abs_drift_pp": 0.0, "mean_flip_rate": 0.0}}
    # Tab. 19's "Mean" row: the mean over all cells (here one per model)
    assert (floor["cells"], floor["mean_abs_drift_pp"], floor["max_abs_drift_pp"], floor["mean_flip_rate"]) == (
        2, pytest.approx(drift / 2), pytest.approx(drift), pytest.approx(flip_rate / 2))
    assert (floor["f0"], floor["flips"]) == (f0, flips)


def test_several_models_score_with_their_replicates_in_one_call(tmp_path: Path) -> None:
    originals, replicates = _study(tmp_path)
    args = ["score", *map(str, originals), "-o", str(tmp_path / "score"), "--bootstrap", "50"]
    for rep in replicates:
        args += ["--noise", str(rep)]
    result = CliRunner().invoke(main, [*args, "--noise-f0", "release", "--noise-flips", "comparison"])
    assert result.exit_code == 0, result.output
    assert result.exception is None
    floor = json.loads((tmp_path / "score" / "summary.json").read_text())["benchmarks"]["triage"]["noise_floor"]
    assert floor["mean_abs_drift_pp"] == pytest.approx(100 / 24) and floor["mean_flip_rate"] == pytest.approx(0.25)
    assert CliRunner().invoke(main, ["report", str(tmp_path / "score")]).exit_code == 0
    report = (tmp_path / "score" / "report.md").read_text(encoding="utf-8")
    assert "f0 as the release defines it; flips per comparison." in report
    for line in ("| m1 | 1 | 8.3 p | 50.0% |", "| m2 | 1 | 0.0 p | 0.0% |", "| Mean | 2 | 4.2 p | 25.0% |"):
        assert line in report


def test_a_replicate_without_its_original_is_an_error(tmp_path: Path) -> None:
    originals, replicates = _study(tmp_path)
    result = CliRunner().invoke(main, ["score", str(originals[0]), "--noise", str(replicates[1])])
    assert result.exit_code == 1
    assert f"{replicates[1] / 'run.json'}: is a baseline replicate of m2 on triage (reasoning none), but no run " \
           "given to score answers that" in result.output


def test_a_replicate_answered_from_the_cache_is_refused(tmp_path: Path) -> None:
    originals, replicates = _study(tmp_path, cached=True)
    with pytest.raises(ScoreInputError, match="24 of 24 answers came from the response cache"):
        pair_replicates([load_run(originals[0])], [load_run(replicates[0])])


def test_the_scored_run_given_as_its_own_replicate_is_refused(tmp_path: Path) -> None:
    """Fresh answers (no cache) but the original's own: a zero noise floor by construction, never reported."""
    originals, _ = _study(tmp_path)
    result = CliRunner().invoke(main, ["score", str(originals[0]), "--noise", str(originals[0])])
    assert result.exit_code == 1 and result.output.startswith(f"Error: {originals[0] / 'run.json'}: is the scored "
                                                              "run itself, not a replicate of it")


def test_noise_options_need_replicates(tmp_path: Path) -> None:
    originals, _ = _study(tmp_path)
    result = CliRunner().invoke(main, ["score", str(originals[0]), "--noise-f0", "release"])
    assert result.exit_code == 2 and "give the replicate runs with --noise" in result.output
