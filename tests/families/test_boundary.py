"""Issue 33 item 2: an installed family can add to the language and to `spec score`, never break what is
there. Its clauses are built into the grammar when it loads: one that does not fit is one error naming the
distribution and the clause, and a spec that does not name the family still checks; a clause keyword or a
score option that takes a built-in family's name is refused with both names."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from spec_audits.cli import main
from spec_audits.dispatch import registry
from tests.plugins import install

ECHO = '''suite echo "Echo"
seed 1
template question "Answer A or B: {{ condition }}?"
design echo:
  conditions hello, goodbye
  prompt question
  analysis echo
'''
TRIAGE = "specs/triage.spec"


def _plugin(site: Path, dist: str, change: str) -> None:
    """The echo family installed from `dist`, with `change` applied to it (`replaced` arguments)."""
    module = dist.replace("-", "_")
    install(site, dist, {"echo": f"{module}:FAMILY"}, {module: (
        "import click\nfrom spec_audits.compiler import clauses as c\nfrom spec_audits.sdk import replaced\n"
        "from tests.families.echo import FAMILY as ECHO\n"
        f"FAMILY = replaced(ECHO, {change})\n")})


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "site"
    folder.mkdir()
    monkeypatch.syspath_prepend(str(folder))
    return folder


def _spec(*args: str) -> Result:
    return CliRunner().invoke(main, list(args))


def _echo_spec(tmp_path: Path) -> Path:
    path = tmp_path / "echo.spec"
    path.write_text(ECHO, encoding="utf-8")
    return path


def _refused(result: Result) -> str:
    assert result.exit_code == 1 and isinstance(result.exception, SystemExit), result.output
    return result.output


def test_a_clause_that_breaks_the_grammar_is_one_error_and_other_specs_still_check(site: Path,
                                                                                     tmp_path: Path) -> None:
    _plugin(site, "spec-bad-grammar", "syntax=(c.ClauseSpec('shout', c.Args('NUMBER no_such_rule', 'N'), 'x'),)")
    assert _spec("check", TRIAGE).exit_code == 0
    output = _refused(_spec("check", str(_echo_spec(tmp_path))))
    assert output.startswith("Error: design family 'echo' from spec-bad-grammar 0.1 (entry point echo = "
                             "spec_bad_grammar:FAMILY): its clause 'shout' does not fit the spec grammar (")
    assert output.endswith("change that clause's shape, or uninstall the distribution\n")
    assert output.count("\n") == 1 and "no_such_rule" in output


def test_a_shared_keyword_with_another_shape_is_refused_by_name(site: Path, tmp_path: Path) -> None:
    _plugin(site, "spec-answer", "syntax=(c.ClauseSpec('answer', c.Whole(), 'x'),)")
    assert _spec("check", TRIAGE).exit_code == 0
    assert _refused(_spec("check", str(_echo_spec(tmp_path)))) == (
        "Error: design family 'echo' from spec-answer 0.1 (entry point echo = spec_answer:FAMILY): its clause "
        "'answer' does not fit the spec grammar (the shared clause of that keyword has another shape): change "
        "that clause's shape, or uninstall the distribution\n")


def test_a_builtin_family_keyword_with_another_shape_is_refused_with_both_names(site: Path,
                                                                                  tmp_path: Path) -> None:
    _plugin(site, "spec-fraction", "syntax=(c.ClauseSpec('fraction', c.Whole(), 'x'),)")
    assert _refused(_spec("check", str(_echo_spec(tmp_path)))) == (
        "Error: design family 'echo' from spec-fraction 0.1 (entry point echo = spec_fraction:FAMILY): its clause "
        "'fraction' has another shape than the clause 'fraction' of the built-in family 'effects' (it would "
        "change that one's meaning): rename it, or uninstall the distribution\n")


def test_a_score_option_of_a_builtin_name_is_refused_and_the_builtin_one_still_works(site: Path,
                                                                                      tmp_path: Path) -> None:
    _plugin(site, "spec-alpha", "score_flags=(click.Option(['--alpha'], type=float),)")
    assert _refused(_spec("check", str(_echo_spec(tmp_path)))) == (
        "Error: design family 'echo' from spec-alpha 0.1 (entry point echo = spec_alpha:FAMILY): its `spec "
        "score` option '--alpha' takes the name of the option 'alpha' of the built-in family 'influence_pairs' "
        "(it would change that one's meaning): rename it, or uninstall the distribution\n")
    helped = _spec("score", "--help")
    assert helped.exit_code == 0 and helped.exception is None
    assert "--alpha FLOAT" in helped.output  # the built-in option, whose help is unchanged
    assert "echo" in registry.names() and [f.name for f in registry.loadable()] == list(registry.BUILTIN)


def test_tests_see_only_the_builtin_families() -> None:
    assert registry.names() == sorted(registry.BUILTIN)


def test_of_two_plugins_with_one_option_name_the_first_keeps_it(site: Path) -> None:
    """Never a silent replacement: `spec score` offers the option as the first plug-in (by name) declares it."""
    for dist, name in (("spec-first", "echo"), ("spec-second", "echo_two")):
        module = dist.replace("-", "_")
        install(site, dist, {name: f"{module}:FAMILY"}, {module: (
            "import click\nfrom spec_audits.sdk import replaced\nfrom tests.families.echo import FAMILY as ECHO\n"
            f"FAMILY = replaced(ECHO, name={name!r}, score_flags=(click.Option(['--bins'], type=int, "
            f"help='Bins of {name}.'),))\n")})
    assert [f.name for f in registry.loadable()] == [*registry.BUILTIN, "echo"]
    helped = _spec("score", "--help")
    assert helped.exit_code == 0 and helped.exception is None
    assert "Bins of echo." in helped.output and "echo_two" not in helped.output
