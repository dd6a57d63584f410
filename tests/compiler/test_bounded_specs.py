"""Hostile specs that used to hang end within a few seconds, with their located error (the exact
messages are in each fixture's header, checked by test_malformed_specs.py); the compile budget."""

from __future__ import annotations

import re
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from compiler.budget import Budget, counted
from compiler.cli import check, compile_cmd
from compiler.errors import Span, SpecError
from tests.compiler.test_malformed_specs import MALFORMED, expected, reported, run_check
from tests.support import ROOT

BOUNDED = ("sandbox_huge_power", "sandbox_nested_huge_ranges", "sandbox_string_repetition",
           "sandbox_render_time_limit", "budget_too_many_rows", "budget_too_many_trials",
           "expression_nested_too_deep", "template_nested_too_deep", "sandbox_huge_format_width",
           "sandbox_huge_call_argument", "sandbox_huge_percent_width")
SECONDS = 5.0


@pytest.mark.parametrize("name", BOUNDED)
def test_bounded_case_ends_quickly(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    start = time.monotonic()
    result = run_check(f"{name}.spec", monkeypatch)
    assert time.monotonic() - start < SECONDS
    assert reported(result.output) == expected(MALFORMED / f"{name}.spec")


def test_a_design_that_cannot_plan_is_stopped_at_the_budget() -> None:
    rows = iter([{"samples": 1}] * 3)
    with pytest.raises(SpecError) as caught:
        list(counted(rows, Budget(rows=2), Span("x.spec", 4, 1)))
    assert [(d.span.line, d.message, d.hint) for d in caught.value.diagnostics] == [
        (4, "the suite would have 3 rows, over the budget of 2", "pass --max-rows 3 if this is intended")]


def test_check_prints_the_planned_size_and_the_estimated_time(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    result = CliRunner().invoke(check, ["specs/triage.spec"])
    assert result.exit_code == 0, result.output
    assert result.exception is None
    size, estimate = result.output.splitlines()[-2:]
    assert size == "specs/triage.spec: planned size: 15,000 rows, 60,000 trials, about 10.1 MB"
    assert re.fullmatch(r"specs/triage\.spec: estimated compile time: about \d+\.\d s of CPU time "
                        r"\(timed on 240 sampled rows\)", estimate), estimate


def test_max_trials_raises_the_budget(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(MALFORMED)
    result = CliRunner().invoke(check, ["budget_too_many_trials.spec", "--max-trials", "54000000000"])
    assert result.exit_code == 0, result.output
    assert result.exception is None
    assert result.output.splitlines()[-2] == ("budget_too_many_trials.spec: planned size: 54 rows, "
                                              "54,000,000,000 trials, about 18.4 KB")


def test_a_thousand_misspelt_names_are_reported_quickly(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    base = (MALFORMED / "samples_zero.spec").read_text(encoding="utf-8").split("\n", 2)[2].replace("  samples 0\n", "")
    factors = "".join(f'factor color{i}:\n  A red{i} "r" / "r"\n  B blue{i} "b" / "b"\n' for i in range(1000))
    misspelt = ", ".join(f"colr{i}x" for i in range(1000))
    spec = base.replace("factor color:", factors + "factor color:").replace("  factors *", f"  factors {misspelt}")
    (tmp_path / "many.spec").write_text(spec, encoding="utf-8")
    start = time.monotonic()
    result = run_check("many.spec", monkeypatch, tmp_path)
    assert time.monotonic() - start < SECONDS
    found = reported(result.output)
    assert len(found) == 1000
    assert (found[0].message, found[0].hint) == ("unknown factor 'colr0x'", "did you mean 'color0'?")
    assert result.output.rstrip().endswith("1000 errors found.")


def test_compile_refuses_over_budget_and_takes_the_override(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(MALFORMED)
    spec, out = "budget_too_many_trials.spec", str(tmp_path / "suite")
    refused = CliRunner().invoke(compile_cmd, [spec, "-o", out])
    assert refused.exit_code == 1
    assert isinstance(refused.exception, SystemExit)
    assert reported(refused.output) == expected(MALFORMED / spec)
    assert not (tmp_path / "suite").exists()
    allowed = CliRunner().invoke(compile_cmd, [spec, "-o", out, "--max-trials", "54000000000"])
    assert allowed.exit_code == 0, allowed.output
    assert allowed.exception is None
    assert allowed.output.splitlines()[0] == f"compiled tiny: 54 prompts, 54000000000 trials -> {out}"
