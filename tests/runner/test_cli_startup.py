"""`spec` imports a command's module only when that command runs, so `spec --help` and `spec check` do not
pay for scipy, litellm or asyncio; the group's one-line helps stay the commands' own."""

from __future__ import annotations

import importlib
import inspect
import subprocess
import sys

import pytest
from click.testing import CliRunner

from spec_audits.cli import COMMANDS, main
from tests.support import ROOT

HEAVY = ("scipy", "pandas", "litellm", "asyncio", "matplotlib", "z3", "statsmodels")


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_the_groups_help_line_is_the_commands_own(name: str) -> None:
    module, attribute, line = COMMANDS[name]
    command = getattr(importlib.import_module(module), attribute)
    assert command.name == name
    assert " ".join(inspect.cleandoc(command.help).split("\n\n")[0].split()) == line


def _imported_after(*argv: str) -> set[str]:
    probe = ("import sys\nfrom spec_audits.cli import main\ntry:\n    main(sys.argv[1:])\n"
             "except SystemExit:\n    pass\n"
             "print(' '.join(sorted({m.split('.')[0] for m in sys.modules})), file=sys.stderr)")
    done = subprocess.run([sys.executable, "-c", probe, *argv], cwd=ROOT, capture_output=True, text=True, check=True)
    return set(done.stderr.split())


def test_help_imports_no_command_module() -> None:
    assert not set(HEAVY) & _imported_after("--help")


def test_check_imports_only_what_checking_needs() -> None:
    assert not {"scipy", "pandas", "litellm", "matplotlib", "statsmodels"} & _imported_after(
        "check", "specs/triage.spec")


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
