"""Issue 21's acceptance test: a family installed from a distribution of its own (tests/families/tally/,
through the `spec_audits.families` entry-point group) adds a design keyword with its own argument shape, a
`spec score` option and a kind of published table, with no edit anywhere else; a spec using the keyword
compiles (a wrong argument is a located error), runs on the loopback stub, and its run and a table of its
kind are scored."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from spec_audits.dispatch import registry
from tests.plugins import install, invoke, run_on_stub

SPEC = '''suite tally "Tally"
seed 1
template question "Answer A or B: {{ condition }}?"
design tally:
  conditions hello, goodbye
  prompt question
  repeat 3 times
  analysis tally
'''


@pytest.fixture
def tally(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The tally family installed as another distribution would be: an entry point, nothing in spec naming it."""
    site = tmp_path / "site"
    site.mkdir()
    monkeypatch.syspath_prepend(str(site))
    install(site, "spec-tally-family", {"tally": "spec_tally_family"},
            {"spec_tally_family": "from tests.families.tally import FAMILY\n"})
    registry.installed.cache_clear()
    yield
    registry.unregister("tally")
    registry.installed.cache_clear()


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "tally.spec"
    path.write_text(text, encoding="utf-8")
    return path


def test_the_keyword_compiles_and_the_run_and_a_table_score(tally: None, tmp_path: Path) -> None:
    spec = _write(tmp_path, SPEC)
    assert invoke("check", str(spec)).output == f"{spec}: design 'tally' is valid: 2 conditions, 3 times each\n"
    suite, run_dir = tmp_path / "suite", tmp_path / "run"
    compiled = invoke("compile", str(spec), "-o", str(suite))
    assert compiled.exit_code == 0, compiled.output
    assert len((suite / "suite.jsonl").read_text().splitlines()) == 6
    ran = run_on_stub(suite, run_dir)
    assert ran.exit_code == 0, ran.output
    scored = invoke("score", str(run_dir), "--shout")
    assert scored.exit_code == 0, scored.output
    lines = scored.output.splitlines()  # the headline, the report's first table, what to run next
    assert lines[:3] == [f"6 ANSWERS TALLIED -> {run_dir / 'score'}".upper(), "", "outcome  answers"]
    assert lines[-2].startswith(f"next: spec report {run_dir / 'score'}")
    table = tmp_path / "tallies.csv"
    table.write_text("condition,answers\nhello,4\ngoodbye,5\n", encoding="utf-8")
    from_table = invoke("score", "--tallies", str(table))
    assert from_table.exit_code == 0, from_table.output
    assert from_table.output.splitlines()[:5] == [f"9 table answers tallied -> {tmp_path / 'tallies-score'}", "",
                                                  "outcome  answers", "goodbye  5", "hello    4"]
    summary = json.loads((tmp_path / "tallies-score" / "summary.json").read_text())
    assert summary == {"family": "tally", "answers": {"goodbye": 5, "hello": 4}}


def test_a_wrong_argument_is_a_located_error(tally: None, tmp_path: Path) -> None:
    spec = _write(tmp_path, SPEC.replace("repeat 3 times", 'repeat "3" times'))
    result = invoke("check", str(spec))
    assert result.exit_code == 1 and isinstance(result.exception, SystemExit)
    assert result.output.splitlines()[0] == f"{spec}:7:10: error: unexpected '\"3\"'; expected a number"
    spec = _write(tmp_path, SPEC.replace("repeat 3 times", "repeat 0 times"))
    result = invoke("check", str(spec))
    assert result.exit_code == 1 and isinstance(result.exception, SystemExit)
    assert result.output.splitlines()[0] == f"{spec}:7:3: error: repeat needs at least 1 time, got 0"


def test_the_option_and_the_table_kind_belong_to_the_family(tally: None, tmp_path: Path) -> None:
    help_text = invoke("score", "--help").output
    assert "--tallies FILE" in help_text and "--shout" in help_text
    table = tmp_path / "tallies.csv"
    table.write_text("condition,answers\nhello,many\n", encoding="utf-8")
    bad = invoke("score", "--tallies", str(table))
    assert bad.exit_code == 1 and isinstance(bad.exception, SystemExit)
    assert bad.output == f"Error: {table}, row 2, column 'answers': answers must be a whole number, got 'many'\n"
    counts = tmp_path / "counts.csv"
    counts.write_text("x\n", encoding="utf-8")
    refused = invoke("score", "--counts", str(counts), "--shout")
    assert refused.exit_code == 2 and isinstance(refused.exception, SystemExit)
    assert refused.output.splitlines()[-1].startswith(
        "Error: --shout does not apply to a counts table: influence_pairs scoring takes --alpha,")


def test_without_the_family_the_keyword_is_not_in_the_language(tmp_path: Path) -> None:
    spec = _write(tmp_path, SPEC)
    result = invoke("check", str(spec))
    assert result.exit_code == 1 and isinstance(result.exception, SystemExit)
    assert result.output.splitlines()[0].startswith(f"{spec}:7:3: error: unexpected 'repeat'")
