"""A suite's manifest.analysis is a stranger's data (manifest.json is not what the suite.jsonl hash covers):
every family reads it through the closed record of what its compile writes, checked by the command before
any scorer or importer sees it (spec_audits/contract/analysis_record.py)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from spec_audits.cli import main
from spec_audits.contract.analysis_record import checked_analysis
from spec_audits.dispatch import registry
from spec_audits.families.influence.score.synthetic import Design, write_run, write_suite

ROOT = Path(__file__).resolve().parents[2]
MANIFESTS = sorted((ROOT / "generated").glob("*/manifest.json"))
FIX = "; recompile the suite from its spec or get it from its author\n"
INFLUENCE_KEYS = "family, alpha, bootstrap, fdr, fdr_by, benchmark, exclude, reasoning, answer"


def _compiled(name: str) -> dict[str, Any]:
    analysis: dict[str, Any] = json.loads((ROOT / "generated" / name / "manifest.json").read_text())["analysis"]
    return analysis


def _run(tmp_path: Path, analysis: Any) -> tuple[Path, Path]:
    """A synthetic influence run whose suite's manifest carries `analysis` (hashed into run.json, as a run of
    a stranger's suite records it)."""
    suite = tmp_path / "suite"
    rows = write_suite(suite, Design())
    manifest = json.loads((suite / "manifest.json").read_text())
    (suite / "manifest.json").write_text(json.dumps({**manifest, "analysis": analysis}), encoding="utf-8")
    write_run(tmp_path / "run", suite, rows, lambda factor, influence, condition: 0.5)
    return tmp_path / "run", suite / "manifest.json"


@pytest.mark.parametrize("manifest", MANIFESTS, ids=[path.parent.name for path in MANIFESTS])
def test_every_shipped_suites_analysis_is_its_familys_record(manifest: Path) -> None:
    """generated/*/manifest.json are the compiled manifests (tests/compiler/test_compile_golden.py recompiles
    them byte for byte), so what each family's compile writes validates against its record."""
    analysis = json.loads(manifest.read_text())["analysis"]
    family = registry.get(analysis["family"])
    assert family is not None
    record = checked_analysis(analysis, family.record_type(), manifest)
    assert record.model_dump(exclude_none=True) == analysis


HOSTILE: list[tuple[str, dict[str, Any], str]] = [
    ("influence_unknown_key", {**_compiled("triage"), "item_keys": 5},
     f"analysis.item_keys: not a key its family's compile writes ({INFLUENCE_KEYS})"),
    ("influence_bootstrap_too_large", {**_compiled("triage"), "bootstrap": 10**9},
     "analysis.bootstrap: must be a whole number from 1 to 1,000,000, got 1000000000"),
    ("influence_bootstrap_as_text", {**_compiled("triage"), "bootstrap": "5000"},
     "analysis.bootstrap: must be a whole number from 1 to 1,000,000, got '5000'"),
    ("influence_alpha_true", {**_compiled("triage"), "alpha": True},
     "analysis.alpha: must be a number between 0 and 1, got True"),
    ("influence_answer_tokens", {**_compiled("triage"), "answer": {"kind": "labels", "tokens": ["A"], "x": 1}},
     "analysis.answer.tokens: list should have at least 2 items after validation, not 1, got ['A']; "
     "analysis.answer.x: not a key its family's compile writes"),
    ("influence_huge_nested_value", {**_compiled("triage"), "benchmark": [[["x" * 100] * 100] * 100]},
     f"analysis.benchmark: must be a name or a number, got {repr([[['x' * 100] * 100] * 100])[:60]}..."),
    ("influence_family_not_a_name", {"family": {"a": 1}},
     "analysis.family: must be a family's name, got {'a': 1}"),
    ("cue_parse_and_rate", {**_compiled("cue_visibility"), "parse": "lenient", "exclude_abstention": 1.5},
     "analysis.parse: must be strict or tolerant, got 'lenient'; "
     "analysis.exclude_abstention: must be a rate from 0 to below 1, got 1.5"),
    ("cue_band_record", {**_compiled("cue_visibility"), "puzzle_bands": {"easy": {"skeletons": -1}}},
     "analysis.puzzle_bands.easy.skeletons: input should be greater than or equal to 0, got -1; "
     "analysis.puzzle_bands.easy.score_min: missing; analysis.puzzle_bands.easy.score_mean: missing; "
     "analysis.puzzle_bands.easy.score_max: missing; analysis.puzzle_bands.easy.clues_min: missing; and 5 more"),
    ("cue_unknown_key", {**_compiled("cue_visibility"), "bootstrap": 5000},
     "analysis.bootstrap: not a key its family's compile writes (family, restrict, parse, exclude_abstention, "
     "puzzle_bands)"),
    ("cue_huge_nested_value", {**_compiled("cue_visibility"), "restrict": [[["x" * 100] * 100] * 100]},
     f"analysis.restrict: must be solved or none, got {repr([[['x' * 100] * 100] * 100])[:60]}..."),
    ("effects_reference_not_a_level",
     {**_compiled("demographic_decisions"), "factors": [
         {**_compiled("demographic_decisions")["factors"][0], "reference": "a61"},
         *_compiled("demographic_decisions")["factors"][1:]]},
     "analysis.factors.0: reference 'a61' is not a level of factor 'age'"),
    ("effects_texts_not_the_levels",
     {**_compiled("demographic_decisions"), "factors": [
         {**_compiled("demographic_decisions")["factors"][0], "texts": {"a20": "20 years old", "a61": "61"}},
         *_compiled("demographic_decisions")["factors"][1:]]},
     "analysis.factors.0: the texts of factor 'age' name ['a20', 'a61'], not its levels ['a100', 'a20', 'a30', "
     "'a40', 'a50', 'a60', 'a70', 'a80', 'a90']"),
    ("effects_interaction_over_a_stranger", {**_compiled("demographic_decisions"), "interactions": [["age", "x"]]},
     "analysis: interactions name x, which the design does not cross"),
    ("effects_scenario_effect_and_answer", {**_compiled("demographic_decisions"), "scenario_effect": "mixed",
                                            "answer": {"kind": "free", "tokens": ["yes", "no"]}},
     "analysis.scenario_effect: must be random or cluster, got 'mixed'; analysis.answer.kind: input should be "
     "'yesno', 'options', 'scale' or 'number', got 'free'"),
    ("bias_unknown_key", {**_compiled("cognitive_bias"), "reverse": 0.5},
     "analysis.reverse: not a key its family's compile writes (family, params, target, human, did, matrix_order, "
     "psm_covariates, scm_covariates, arms, protocol)"),
    ("bias_huge_nested_value", {**_compiled("cognitive_bias"), "params": [[["x" * 100] * 100] * 100]},
     f"analysis.params: input should be a valid string, got {repr([[['x' * 100] * 100] * 100])[:60]}..."),
    ("bias_arms_and_did", {**{k: v for k, v in _compiled("cognitive_bias").items() if k != "arms"}, "did": "x"},
     "analysis.did: must be abs or authors, got 'x'; analysis.arms: missing"),
    ("bias_order_not_names", {**_compiled("cognitive_bias"), "matrix_order": [1, 2]},
     "analysis.matrix_order.0: input should be a valid string, got 1; "
     "analysis.matrix_order.1: input should be a valid string, got 2"),
]


@pytest.mark.parametrize(("analysis", "problem"), [(a, p) for _, a, p in HOSTILE], ids=[c for c, _, _ in HOSTILE])
def test_a_hostile_analysis_is_refused_before_scoring_naming_each_key(tmp_path: Path, analysis: dict[str, Any],
                                                                      problem: str) -> None:
    run, manifest = _run(tmp_path, analysis)
    result = CliRunner().invoke(main, ["score", str(run)])
    assert result.exit_code == 1 and isinstance(result.exception, SystemExit), result.output
    assert result.output == f"Error: {manifest}: {problem}{FIX}"
    assert not (run / "score").exists()


NAN = [("triage", "alpha", "must be a number between 0 and 1, got nan"),
       ("cue_visibility", "exclude_abstention", "must be a rate from 0 to below 1, got nan"),
       ("cognitive_bias", "did", "must be abs or authors, got nan")]


@pytest.mark.parametrize(("suite", "key", "problem"), NAN, ids=[suite for suite, _, _ in NAN])
def test_nan_in_an_analysis_is_refused(tmp_path: Path, suite: str, key: str, problem: str) -> None:
    """JSON's NaN (which Python's and pydantic's readers accept) is no value any compile writes."""
    run, manifest = _run(tmp_path, {**_compiled(suite), key: "NAN-HERE"})
    manifest.write_text(manifest.read_text().replace('"NAN-HERE"', "NaN"))
    result = CliRunner().invoke(main, ["score", str(run)])
    assert result.exit_code == 1 and isinstance(result.exception, SystemExit), result.output
    assert result.output == f"Error: {manifest}: analysis.{key}: {problem}{FIX}"


def test_a_noise_replicates_analysis_is_checked_too(tmp_path: Path) -> None:
    run, _ = _run(tmp_path / "main", _compiled("triage"))
    replicate, manifest = _run(tmp_path / "replicate", {**_compiled("triage"), "exclude": None, "x": []})
    result = CliRunner().invoke(main, ["score", str(run), "--noise", str(replicate), "-o", str(tmp_path / "out")])
    assert result.exit_code == 1 and isinstance(result.exception, SystemExit), result.output
    assert result.output == (f"Error: {manifest}: analysis.x: not a key its family's compile writes "
                             f"({INFLUENCE_KEYS}){FIX}")
    assert not (tmp_path / "out").exists()


def test_import_checks_the_suites_analysis_before_reading_it(tmp_path: Path) -> None:
    _, manifest = _run(tmp_path, {**_compiled("triage"), "benchmark": {"x": 1}})
    lines = tmp_path / "lines.jsonl"
    lines.write_text("{}\n", encoding="utf-8")
    result = CliRunner().invoke(main, ["import", "choices-probe", str(lines), "--suite", str(manifest.parent),
                                       "--out", str(tmp_path / "out")])
    assert result.exit_code == 1 and isinstance(result.exception, SystemExit), result.output
    assert result.output == f"Error: {manifest}: analysis.benchmark: must be a name or a number, got {{'x': 1}}{FIX}"
    assert not (tmp_path / "out").exists()


def test_a_deeply_nested_analysis_is_a_located_error(tmp_path: Path) -> None:
    run, manifest = _run(tmp_path, {**_compiled("triage"), "benchmark": "DEEP"})
    manifest.write_text(manifest.read_text().replace('"DEEP"', "[" * 100_000 + "]" * 100_000))
    result = CliRunner().invoke(main, ["score", str(run)])
    assert result.exit_code == 1 and isinstance(result.exception, SystemExit), result.output
    assert result.output.startswith(f"Error: {manifest}: Invalid JSON: recursion limit exceeded at line 1 column ")


def test_an_influence_answer_its_rows_do_not_give_is_a_located_error(tmp_path: Path) -> None:
    """The answer record says what each row's first token shows: tokens the rows do not answer with are a
    located error (suite.jsonl:LINE, row id), never a position bias silently absent."""
    run, manifest = _run(tmp_path, {"answer": {"kind": "labels", "tokens": ["X", "Y"]}})
    first = json.loads((manifest.parent / "suite.jsonl").read_text().splitlines()[0])["id"]
    result = CliRunner().invoke(main, ["score", str(run)])
    assert result.exit_code == 1 and isinstance(result.exception, SystemExit), result.output
    assert result.output == (f"Error: {manifest.parent / 'suite.jsonl'}:1: row {first}: its answers ['A', 'B'] are "
                             f"not the analysis's tokens ['X', 'Y']{FIX}")
    assert not (run / "score").exists()
