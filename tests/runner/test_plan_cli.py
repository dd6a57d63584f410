"""`spec plan`: the minimum detectable effects of a spec or suite (golden values from the formula), the
options for a target effect with their calls, and located errors for what it cannot plan."""

from __future__ import annotations

import math
import re
from pathlib import Path

import pytest
from click.testing import CliRunner
from scipy import stats

from spec_audits.cli import main
from spec_audits.contract.reader import read_suite
from spec_audits.contract.results_model import RunInfo
from spec_audits.dispatch import registry
from spec_audits.sdk import replaced
from tests.families.effects import SPEC, write_tiny


def _plan(*args: str) -> str:
    result = CliRunner().invoke(main, ["plan", *args])
    assert result.exit_code == 0 and result.exception is None, result.output
    return result.output


def _golden_mde(n: int, clusters: int, icc: float, tests: int) -> float:
    """(t_{1-a/2} + t_{power}) * SE, SE^2 = 1/4 * (1 + (m - 1) icc) * 2/n, m = n / clusters per arm."""
    level, df = 0.05 / tests, clusters - 1
    se = math.sqrt(0.25 * (1 + (n / clusters - 1) * icc) * 2 / n)
    return (stats.t.ppf(1 - level / 2, df) + stats.t.ppf(0.8, df)) * se


def test_plan_of_a_spec_gives_each_statistics_mde(tmp_path: Path) -> None:
    output = _plan(str(write_tiny(tmp_path)))
    assert "4 statistics, each tested at 0.0125 (BH at 0.05), power 0.8" in output
    assert "variances: assumed: answer variance at its largest, icc 0.1" in output
    # 3 scenarios x 2 genders x 2 conditions answers at age=old and at the reference, one sample each
    assert (f"P(yes): age=old vs middle: n 12 vs 12 in 3 clusters, icc 0.100, design effect 1.30, "
            f"SE {math.sqrt(0.25 * 1.3 / 6):.4f}, MDE {_golden_mde(12, 3, 0.1, 4):.4f}") in output


def test_plan_for_an_effect_lists_the_options_and_their_calls(tmp_path: Path) -> None:
    compiled = CliRunner().invoke(main, ["compile", str(write_tiny(tmp_path)), "-o", str(tmp_path / "suite")])
    assert compiled.exit_code == 0 and compiled.exception is None, compiled.output
    output = _plan(str(tmp_path / "suite"), "--effect", "0.3", "--icc", "0")
    assert "To find a shift of 0.3 in every statistic with power 0.8:" in output
    assert "more scenarios: x" in output and "more samples per cell: x" in output
    assert output.count("; 0.3 needs x") == 4  # each statistic's own multiple of the scenarios
    assert "logprob mode (answer variance bounded by the sampled one)" in output
    assert "36 calls" in output  # the suite's 36 rows, one sample each, now


def test_more_samples_out_of_reach_says_to_add_scenarios(tmp_path: Path) -> None:
    output = _plan(str(write_tiny(tmp_path)), "--effect", "0.05", "--icc", "0.5")
    assert "more samples per cell: out of reach (the clustering sets a floor): add scenarios" in output


def test_a_family_that_declares_no_variances_is_a_located_error(tmp_path: Path) -> None:
    family = registry.get("effects")
    assert family is not None and family.variances is not None
    registry.register(replaced(family, variances=None))  # a registered family stands in for the built-in one
    try:
        result = CliRunner().invoke(main, ["plan", str(write_tiny(tmp_path))])
    finally:
        registry.unregister("effects")
    assert result.exit_code == 1 and isinstance(result.exception, SystemExit), result.output
    assert "tiny.spec: its design's analysis family 'effects' declares no variances (Family.variances), " \
           "so spec plan cannot size it" in result.output


def test_a_pilot_that_is_not_a_run_is_a_located_error(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    result = CliRunner().invoke(main, ["plan", str(write_tiny(tmp_path)), "--pilot", str(tmp_path / "empty")])
    assert result.exit_code == 1 and isinstance(result.exception, SystemExit), result.output
    assert result.output == (f"Error: {tmp_path / 'empty' / 'run.json'}: missing; is {tmp_path / 'empty'} a run "
                             "folder? (spec run writes one)\n")


def test_plan_help_has_an_example() -> None:
    output = _plan("--help")
    assert "spec plan specs/demographic_decisions.spec" in output and "--pilot" in output


def test_a_pilot_of_another_design_is_a_located_error(tmp_path: Path) -> None:
    """A pilot of a design with other factors cannot give this design's variances: refused, naming it."""
    other = write_tiny(tmp_path / "other", SPEC.replace('old "old"', 'old "old"   ancient "ancient"'))
    compiled = CliRunner().invoke(main, ["compile", str(other), "-o", str(tmp_path / "other-suite")])
    assert compiled.exit_code == 0, compiled.output
    (tmp_path / "pilot").mkdir()
    (tmp_path / "pilot" / "results.jsonl").write_text("", encoding="utf-8")
    info = RunInfo(suite_dir=str(tmp_path / "other-suite"), model="synthetic/model", mode="sample", settings={},
                   suite_manifest_sha256=read_suite(tmp_path / "other-suite").manifest_sha256,
                   started="2026-01-01T00:00:00Z", planned=0, done=0, failed=0)
    (tmp_path / "pilot" / "run.json").write_text(info.model_dump_json(), encoding="utf-8")
    result = CliRunner().invoke(main, ["plan", str(write_tiny(tmp_path / "mine")), "--pilot", str(tmp_path / "pilot")])
    assert result.exit_code == 1 and isinstance(result.exception, SystemExit), result.output
    assert f"{tmp_path / 'pilot' / 'run.json'}: is a run of {tmp_path / 'other-suite'}, whose design's analysis " \
           "differs from" in result.output


def test_an_effect_the_suite_already_finds_needs_nothing_more(tmp_path: Path) -> None:
    output = _plan(str(write_tiny(tmp_path)), "--effect", "0.9", "--icc", "0", "--alpha", "0.5", "--power", "0.5")
    assert "To find a shift of 0.9 in every statistic with power 0.5:\n  the suite as it stands: 36 calls" in output
    assert "more scenarios" not in output


def test_a_spec_with_mistakes_is_located(tmp_path: Path) -> None:
    spec = write_tiny(tmp_path, SPEC.replace("  answer yesno\n", "  answer yesnoo\n"))
    result = CliRunner().invoke(main, ["plan", str(spec)])
    assert result.exit_code == 1 and isinstance(result.exception, SystemExit), result.output
    assert f"{spec}:16:10: error: unexpected 'yesnoo'" in result.output
    assert "hint: did you mean 'yesno'?" in result.output and "1 error found." in result.output


def test_prices_are_the_dry_runs_scaled_by_each_option(tmp_path: Path) -> None:
    """The suite's price now is what `spec run --dry-run` says; an option's is that times its multiple."""
    compiled = CliRunner().invoke(main, ["compile", str(write_tiny(tmp_path)), "-o", str(tmp_path / "suite")])
    assert compiled.exit_code == 0, compiled.output
    dry = CliRunner().invoke(main, ["run", str(tmp_path / "suite"), "--model", "openai/gpt-4o-mini", "--dry-run"])
    assert dry.exit_code == 0 and dry.exception is None, dry.output
    live = float(re.search(r"cost \$([0-9.]+)", dry.output).group(1))  # type: ignore[union-attr]
    output = _plan(str(tmp_path / "suite"), "--model", "openai/gpt-4o-mini", "--effect", "0.3", "--icc", "0")
    now = re.search(r"36 calls, \$([0-9.]+) live, \$([0-9.]+) in batches now", output)
    assert now is not None and float(now.group(1)) == pytest.approx(live, abs=1e-4) and live > 0
    k, calls, option = re.search(r"more scenarios: x(\d+) \(\d+ clusters\): ([0-9,]+) calls, \$([0-9.]+) live",
                                 output).groups()  # type: ignore[union-attr]
    assert int(calls.replace(",", "")) == 36 * int(k)
    assert float(option) == pytest.approx(live * int(k), abs=1e-4 * int(k))  # each price printed to $0.0001
