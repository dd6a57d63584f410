"""`spec` imports a command's module only when that command runs, so `spec --help` and `spec check` do not
pay for scipy, litellm or asyncio, nor `spec score` for matplotlib; the group's one-line helps stay the
commands' own."""

from __future__ import annotations

import importlib
import inspect
from pathlib import Path

import pytest
from click.testing import CliRunner

from spec_audits.cli import COMMANDS, main
from tests.support import FIXTURES, ROOT, imported_after

HEAVY = ("scipy", "pandas", "litellm", "asyncio", "matplotlib", "z3", "statsmodels")


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_the_groups_help_line_is_the_commands_own(name: str) -> None:
    module, attribute, line = COMMANDS[name]
    command = getattr(importlib.import_module(module), attribute)
    assert command.name == name
    assert " ".join(inspect.cleandoc(command.help).split("\n\n")[0].split()) == line


def test_help_imports_no_command_module() -> None:
    assert not set(HEAVY) & imported_after("--help")


def test_check_imports_only_what_checking_needs() -> None:
    assert not {"scipy", "pandas", "litellm", "matplotlib", "statsmodels"} & imported_after(
        "check", "specs/triage.spec")


def test_score_prints_its_headline_without_drawing_a_plot_or_importing_matplotlib(tmp_path: Path) -> None:
    """`spec score` prints the report's first table, which it builds without its plots: `spec report` draws them."""
    scored = tmp_path / "scored"
    assert "matplotlib" not in imported_after("score", "--counts", str(FIXTURES / "score" / "golden_counts.csv"),
                                              "-o", str(scored))
    assert (scored / "summary.json").is_file() and not list(scored.rglob("*.png"))
    result = CliRunner().invoke(main, ["report", str(scored)])
    assert result.exit_code == 0 and result.exception is None, result.output
    drawn = sorted(f"(plots/{path.name})" for path in (scored / "plots").iterdir())
    report = (scored / "report.md").read_text(encoding="utf-8")
    assert "(plots/headline.png)" in drawn and "(plots/models-bbq.png)" in drawn
    assert sorted(line[line.index("](") + 1:] for line in report.splitlines() if line.startswith("![")) == drawn


def test_help_lists_every_command_with_its_line() -> None:
    result = CliRunner().invoke(main, ["--help"])
    assert result.exit_code == 0 and result.exception is None
    for name in COMMANDS:
        assert f"\n  {name} " in result.output
    assert "Check a spec for mistakes without writing anything." in result.output


def test_an_unknown_command_is_a_usage_error() -> None:
    result = CliRunner().invoke(main, ["chek"])
    assert result.exit_code == 2 and isinstance(result.exception, SystemExit)
    assert "Error: No such command 'chek'." in result.output


def test_check_runs_with_the_collector_paused_and_leaves_it_as_it_was(monkeypatch: pytest.MonkeyPatch) -> None:
    """A check keeps what it builds, so the collector's passes would free nothing: it is paused for the
    command's imports and its work, and enabled again afterwards (a later `spec run` in the same process
    still collects)."""
    import gc

    from spec_audits.compiler.dispatch import build

    seen: list[bool] = []
    checked = build.check_file

    def recording(*args: object, **kwargs: object) -> object:
        seen.append(gc.isenabled())
        return checked(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(build, "check_file", recording)
    assert gc.isenabled()
    result = CliRunner().invoke(main, ["check", str(ROOT / "specs" / "triage.spec")])
    assert result.exception is None and result.exit_code == 0, result.output
    assert seen == [False]
    assert gc.isenabled()
