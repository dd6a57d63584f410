"""A two-model study on the stub server: one `spec run` into one folder, resumed as one, scored together."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner, Result
from statsmodels.stats.multitest import multipletests

from spec_audits.cli import main
from spec_audits.compiler.dispatch.build import compile_file
from tests.stub_server import StubServer

SPEC = """
suite duo "Two factors, two influences"
seed 3
factor pet:
  A cat "cat owners" / "cat owner"
  B dog "dog owners" / "dog owner"
factor tea:
  A green "green tea drinkers" / "green tea drinker"
  B black "black tea drinkers" / "black tea drinker"
template question "Save (A) {{ first.n }} {{ first.noun }} or (B) {{ second.n }} {{ second.noun }}?"
influence hint prepend "Hint: {{ target.plural }}."
influence plea append joined " " "Please pick {{ target.plural }}."
design main:
  factors *
  influences *
  conditions baseline shared, toward A, toward B
  sizes n_A in 1..2, n_B in 1..2
  order both
  samples 4 split by order
  answer choice "A" | "B"
  decode temperature 1.0
  analysis influence_pairs benchmark duo, bootstrap 200
"""
MODELS = ("openai/stub-small", "openai/stub-large")


@pytest.fixture(scope="module")
def stub() -> Iterator[str]:
    server = StubServer()
    yield server.start()
    server.stop()


def spec(*args: object) -> Result:
    return CliRunner().invoke(main, [str(a) for a in args])


@pytest.fixture(scope="module")
def study(tmp_path_factory: pytest.TempPathFactory, stub: str) -> Path:
    tmp_path = tmp_path_factory.mktemp("study")
    (tmp_path / "duo.spec").write_text(SPEC, encoding="utf-8")
    compile_file(tmp_path / "duo.spec", tmp_path / "duo")
    result = spec("run", tmp_path / "duo", *(f"--model={m}" for m in MODELS), "--api-base", stub,
                  "--out", tmp_path / "study", "--no-progress")
    assert result.exit_code == 0, result.output
    return tmp_path / "study"


def test_one_run_per_model_in_one_study_folder(study: Path, stub: str) -> None:
    listed = json.loads((study / "study.json").read_text())
    assert listed["runs"] == ["stub-small", "stub-large"]
    for name, model in zip(listed["runs"], MODELS, strict=True):
        assert json.loads((study / name / "run.json").read_text())["model"] == model
        assert len((study / name / "results.jsonl").read_text().splitlines()) == 2 * 40 * 2


def test_rerunning_the_study_resumes_every_run(study: Path, stub: str) -> None:
    result = spec("run", study.parent / "duo", *(f"--model={m}" for m in MODELS), "--api-base", stub,
                  "--out", study, "--no-progress")
    assert result.exit_code == 0, result.output
    lines = [line for line in result.output.splitlines() if not line.startswith("  tokens: ")]
    assert [line.split(":")[0] for line in lines] == [str(study / "stub-small"), str(study / "stub-large")]
    assert all("0 calls" in line and "160 from an earlier run" in line for line in lines), result.output


def test_scoring_the_study_applies_bh_across_both_models(study: Path) -> None:
    result = spec("score", study)
    assert result.exit_code == 0, result.output
    assert result.output.startswith(f"8 conditions scored (observed counts of sampled answers) -> {study / 'score'}")
    conds = pd.read_csv(study / "score" / "conditions.csv")
    assert list(conds.columns[:4]) == ["benchmark", "model", "factor", "influence"]
    assert sorted(set(conds["model"])) == sorted(MODELS) and len(conds) == 8
    for family in ("baseline", "asymmetry"):
        expected = multipletests(conds[f"p_{family}"], method="fdr_bh")[1]
        assert np.allclose(conds[f"q_{family}"], expected, rtol=1e-9)
    effects = np.concatenate([conds["p_effect_A"], conds["p_effect_B"]])
    expected = multipletests(effects, method="fdr_bh")[1]
    assert np.allclose(np.concatenate([conds["q_effect_A"], conds["q_effect_B"]]), expected, rtol=1e-9)
    # by hand for the largest effect p-value: BH leaves the largest of m p-values as it is
    assert conds[["q_effect_A", "q_effect_B"]].to_numpy().max() == pytest.approx(effects.max())
    by_model = json.loads((study / "score" / "summary.json").read_text())["benchmarks"]["duo"]["by"]["model"]
    assert sorted(by_model) == sorted(MODELS) and {m["conditions"] for m in by_model.values()} == {4}
    flips = pd.read_csv(study / "score" / "flips.csv")
    assert len(flips) == 2 * 2 * 2 * 2 and flips["n_flip"].le(4).all()  # models x factors x influences x directions
    pooled = json.loads((study / "score" / "summary.json").read_text())["benchmarks"]["duo"]["flip_rates"]["all"]
    assert pooled["flip"]["k"] == flips["k_flip"].sum() and pooled["flip"]["n"] == flips["n_flip"].sum()


def test_scoring_runs_named_one_by_one_equals_scoring_the_study(study: Path) -> None:
    assert spec("score", study).exit_code == 0
    result = spec("score", study / "stub-small", study / "stub-large", "-o", study / "again")
    assert result.exit_code == 0, result.output
    assert (study / "again" / "conditions.csv").read_bytes() == (study / "score" / "conditions.csv").read_bytes()


def test_several_folders_need_an_output_folder(study: Path) -> None:
    result = spec("score", study / "stub-small", study / "stub-large")
    assert result.exit_code == 2 and isinstance(result.exception, SystemExit)
    assert result.output.endswith("Error: scoring several folders together needs -o OUT\n")


def test_the_same_run_twice_is_refused(study: Path) -> None:
    run = study / "stub-small"
    result = spec("score", run, run, "-o", study / "twice")
    assert result.exit_code == 1 and isinstance(result.exception, SystemExit)
    assert result.output == (f"Error: {run}: answers the same benchmark, model (duo, openai/stub-small) as {run}; "
                             "merge shards with spec merge before scoring\n")


def test_the_report_compares_the_models(study: Path) -> None:
    assert spec("score", study).exit_code == 0
    result = spec("report", study / "score")
    assert result.exit_code == 0, result.output
    markdown = (study / "score" / "report.md").read_text(encoding="utf-8")
    assert "![duo: headline figures per model.](plots/models-duo.png)" in markdown
    assert (study / "score" / "plots" / "models-duo.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    by_model = markdown.split("### By model\n", 1)[1].split("###", 1)[0]
    assert [line.split("|")[1].strip() for line in by_model.splitlines() if line.startswith("| openai/")] == [
        "openai/stub-large", "openai/stub-small"]
