"""The limits count work, never time: a render's steps (compiler/sandbox.py) and the compile budget's rows,
trials, bytes and estimate (compiler/budget.py) are the same on a busy machine as on an idle one. The
hostile specs' located errors are in tests/fixtures/malformed (sandbox_*, budget_*), checked by
test_malformed_specs.py; how fast the checks are lives in benchmarks/ (check_bench.py)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from spec_audits.compiler import sandbox
from spec_audits.compiler.budget import Budget, counted
from spec_audits.compiler.commands.cli import check, compile_cmd
from spec_audits.compiler.errors import Span, SpecError
from spec_audits.compiler.sandbox import TemplateLimitError, environment, rendered
from tests.compiler.test_malformed_specs import MALFORMED, expected, reported, run_check
from tests.support import ROOT

ESTIMATE = ("specs/triage.spec: estimated compile time: about 0.8 s of CPU time at the reference pace (counted on "
            "240 sampled rows: 9,348 template steps)")
STEPS = [  # template, context, the steps its render takes
    ("{% for a in s %}{{ a }}{% endfor %}", {"s": "abc"}, 6),  # 3 loop turns, 3 output pieces
    ("{{ t.n }}", {"t": {"n": 1}}, 2),  # a lookup, a piece
    ("{{ s | upper }}", {"s": "abcd"}, 10),  # the filter, 4 characters in and 4 out, a piece
    ("{{ 'ab' ~ s }}", {"s": "xyz"}, 7),  # the join and its 5 characters, a piece
    ("{% if 'a' in s %}y{% endif %}", {"s": "xyz"}, 6),  # each operand and its characters
    ("{% for x in l recursive %}{{ loop(x) }}{% endfor %}", {"l": [[[]], []]}, 7),  # 3 turns, 3 calls, a piece
]


@pytest.mark.parametrize(("source", "context", "steps"), STEPS)
def test_a_render_counts_its_steps(source: str, context: dict[str, object], steps: int) -> None:
    assert rendered(environment().from_string(source), context)[1] == steps


def test_a_render_is_refused_at_its_step_limit_whatever_the_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    template = environment().from_string("{% for a in s %}{% endfor %}")
    monkeypatch.setattr(sandbox, "MAX_STEPS", 50)
    monkeypatch.setattr(time, "monotonic", lambda: 1e12)  # a clock that says forever has passed: not read
    assert rendered(template, {"s": "x" * 50}) == ("", 50)
    with pytest.raises(TemplateLimitError, match="more than 50 steps"):
        rendered(template, {"s": "x" * 51})


def test_the_check_and_its_estimate_do_not_depend_on_the_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(MALFORMED)
    first = run_check("sandbox_render_step_limit.spec", monkeypatch)
    ticks = iter(range(10**9))
    monkeypatch.setattr(time, "monotonic", lambda: 1000.0 * next(ticks))  # every reading 1000 s later
    monkeypatch.setattr(time, "perf_counter", lambda: 1000.0 * next(ticks))
    monkeypatch.setattr(time, "process_time", lambda: 1000.0 * next(ticks))
    assert run_check("sandbox_render_step_limit.spec", monkeypatch).output == first.output
    assert reported(first.output) == expected(MALFORMED / "sandbox_render_step_limit.spec")
    monkeypatch.chdir(ROOT)
    assert CliRunner().invoke(check, ["specs/triage.spec"]).output.splitlines()[-1] == ESTIMATE


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
    assert estimate == ESTIMATE


def test_max_trials_raises_the_budget(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(MALFORMED)
    result = CliRunner().invoke(check, ["budget_too_many_trials.spec", "--max-trials", "54000000000"])
    assert result.exit_code == 0, result.output
    assert result.exception is None
    assert result.output.splitlines()[-2] == ("budget_too_many_trials.spec: planned size: 54 rows, "
                                              "54,000,000,000 trials, about 18.4 KB")


def test_a_thousand_misspelt_names_are_each_reported(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    base = (MALFORMED / "samples_zero.spec").read_text(encoding="utf-8").split("\n", 2)[2].replace("  samples 0\n", "")
    factors = "".join(f'factor color{i}:\n  A red{i} "r" / "r"\n  B blue{i} "b" / "b"\n' for i in range(1000))
    misspelt = ", ".join(f"colr{i}x" for i in range(1000))
    spec = base.replace("factor color:", factors + "factor color:").replace("  factors *", f"  factors {misspelt}")
    (tmp_path / "many.spec").write_text(spec, encoding="utf-8")
    result = run_check("many.spec", monkeypatch, tmp_path)
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
