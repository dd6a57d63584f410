"""The compile budget's plan against the shipped suites (rows and trials exact, bytes within 25%, sampled
rows that are the suite's own, over every kind of row), and the estimated compile time with its limit."""

from __future__ import annotations

import contextlib
import json
from collections import defaultdict
from functools import cache
from pathlib import Path

import pytest
from click.testing import CliRunner

from spec_audits.compiler.budget import SAMPLE_GROUPS, Budget, Size, check_budget
from spec_audits.compiler.commands.cli import check, compile_cmd
from spec_audits.compiler.dispatch.build import Checked, check_file
from spec_audits.compiler.errors import ErrorCollector, Span
from spec_audits.compiler.family import spread
from spec_audits.contract.seeding import canonical_json
from spec_audits.contract.writer import row_id
from tests.compiler.test_malformed_specs import reported
from tests.support import ROOT, shipped_suite

SHIPPED = sorted(p.parent.name for p in (ROOT / "generated").glob("*/manifest.json"))
KINDS = ("condition", "influence", "order", "format", "difficulty", "consequences", "arm")
"""Cell keys whose values change a row's shape: a sample must hold each of their values."""


def manifest(name: str) -> dict[str, object]:
    return json.loads((ROOT / "generated" / name / "manifest.json").read_text(encoding="utf-8"))  # type: ignore[no-any-return]


@cache
def checked(name: str) -> Checked:
    with contextlib.chdir(ROOT):
        return check_file(Path(str(manifest(name)["spec_file"])))


def test_every_shipped_spec_has_its_suite() -> None:
    specs = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "specs").glob("*.spec"))
    assert sorted(str(manifest(name)["spec_file"]) for name in SHIPPED) == specs


@pytest.mark.parametrize("name", SHIPPED)
def test_the_plan_matches_the_shipped_suite(name: str) -> None:
    size = checked(name).size
    assert size is not None
    assert (size.rows, size.trials) == (manifest(name)["rows"], manifest(name)["trials"])
    written = (shipped_suite(name) / "suite.jsonl").stat().st_size
    assert abs(size.bytes - written) <= 0.25 * written, f"planned {size.bytes:,} bytes, written {written:,}"
    assert size.sampled == sum(len(list(d.sample(SAMPLE_GROUPS))) for d in checked(name).designs)


@pytest.mark.parametrize("name", SHIPPED)
def test_sampled_rows_are_rows_of_the_suite_over_every_kind(name: str) -> None:
    ids, kinds = set(), defaultdict(set)
    with (shipped_suite(name) / "suite.jsonl").open(encoding="utf-8") as handle:
        for line in handle:
            row = json.loads(line)
            ids.add(row["id"])
            for key in set(KINDS) & set(row["cell"]):
                kinds[key].add(json.dumps(row["cell"][key]))
    sample = [row for design in checked(name).designs for row in design.sample(SAMPLE_GROUPS)]
    assert {row_id(canonical_json(row)) for row in sample} <= ids
    sampled = {key: {json.dumps(row["cell"][key]) for row in sample} for key in kinds}
    assert sampled == kinds


def test_spread_takes_the_middle_of_equal_stretches() -> None:
    assert spread(200, 8) == [12, 37, 62, 87, 112, 137, 162, 187]
    assert spread(5, 8) == [0, 1, 2, 3, 4]
    assert spread(9, 2) == [2, 6]
    assert spread(0, 8) == []


def test_the_time_limit_names_the_estimate_and_the_override() -> None:
    errors = ErrorCollector()
    check_budget(Size(10, 10, 100, seconds=1234.5, sampled=40, steps=5000), Budget(seconds=600), Span("x.spec", 3, 1),
                 errors)
    assert [(d.message, d.hint) for d in errors.diagnostics] == [(
        "the suite's compile is estimated at about 1,234 s of CPU time at the reference pace (counted on 40 sampled "
        "rows: 5,000 template steps), over the budget of 600 s", "pass --max-seconds 1235 if this is intended")]


def test_the_time_is_not_reported_on_top_of_too_many_rows() -> None:
    errors = ErrorCollector()
    check_budget(Size(10, 10, 100, seconds=5000, sampled=4), Budget(rows=5), Span("x.spec", 3, 1), errors)
    assert [d.message for d in errors.diagnostics] == ["the suite would have 10 rows, over the budget of 5"]


SLOW = '''suite slow "Slow templates"
seed 1
factor color:
  A red "red people" / "red person"
  B blue "blue people" / "blue person"
template question """
Pick one.
A: {{ first.n }} {{ first.noun }}
B: {{ second.n }} {{ second.noun }}{% for i in range(99999) %}{% if i < 0 %}x{% endif %}{% endfor %}
"""
influence nudge append "Choose {{ target.plural }}.{% for i in range(99999) %}{% if i < 0 %}x{% endif %}{% endfor %}"
design main:
  factors *
  influences *
  conditions baseline shared, toward A, toward B
  sizes n_A in 1..500, n_B in 1..500
  order both
  answer choice "A" | "B"
  decode temperature 1.0
'''


def test_a_suite_of_slow_templates_is_refused_before_it_expands(tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """1.5 million rows, each rendering 100,000-turn loops: hours of compiling, refused from the 7 rows sampled
    before the sample's step allowance ran out; the same estimate on any machine."""
    (tmp_path / "slow.spec").write_text(SLOW, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(compile_cmd, ["slow.spec", "-o", "out"])
    assert result.exit_code == 1, result.output
    [found] = reported(result.output)
    assert found.where == "slow.spec:12:1"
    assert (found.message, found.hint) == (
        "the suite's compile is estimated at about 135,043 s of CPU time at the reference pace (counted on 7 sampled "
        "rows: 2,100,038 template steps), over the budget of 600 s", "pass --max-seconds 135043 if this is intended")
    assert not (tmp_path / "out").exists()


def test_max_seconds_lowers_the_time_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    refused = CliRunner().invoke(check, ["specs/triage.spec", "--max-seconds", "0.01"])
    assert refused.exit_code == 1, refused.output
    [found] = reported(refused.output)
    assert found.message == ("the suite's compile is estimated at about 0.8 s of CPU time at the reference pace "
                             "(counted on 240 sampled rows: 9,348 template steps), over the budget of 0.01 s")
    allowed = CliRunner().invoke(check, ["specs/triage.spec", "--max-seconds", "100000"])
    assert allowed.exit_code == 0, allowed.output
