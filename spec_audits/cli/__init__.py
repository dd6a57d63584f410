"""The `spec` command line, the front door: one click group whose commands are imported only when they run.

Each command lives with its stage (compiler/commands/cli.py, runner/commands/run_cli.py, ...); this package
holds only the group, its command table and the one error policy (user_errors.py), above every stage. `spec` and
`python -m spec_audits.cli` start here. Importing them all made
every command, `spec --help` included, pay for scipy, litellm, asyncio and z3 (seconds on a small
machine), so the group knows each command by module, attribute and one-line help, and imports a
command's module only when that command is invoked. tests/runner/test_cli_startup.py keeps the
one-line helps equal to the commands' own. `run` is the program itself (the console entry and `python -m`): a
read-only command's process ends without the interpreter's teardown (6% of `spec check`), and a check's without a
collector pass over all it made.
"""

from __future__ import annotations

import gc
import importlib
import os
import sys

from spec_audits.base import exits
from spec_audits.base.collector import collector_paused

with collector_paused():  # click's ~60 modules are kept for the process's life: no cycle to free as they load
    import click

# name -> (module, attribute, the first paragraph of the command's help)
COMMANDS: dict[str, tuple[str, str, str]] = {
    "check": ("spec_audits.compiler.commands.cli", "check", "Check a spec for mistakes without writing anything."),
    "compile": ("spec_audits.compiler.commands.cli", "compile_cmd",
                "Compile a spec into a frozen, hashed stimulus suite."),
    "show": ("spec_audits.compiler.commands.cli", "show",
             "Show a compiled suite: trials per cell and items exactly as the model sees them."),
    "verify": ("spec_audits.runner.commands.publish.cli", "verify",
               "Check a bundle (.tar.gz or folder) or a compiled suite; every failure named by file and row."),
    "bundle": ("spec_audits.runner.commands.publish.cli", "bundle",
               "Bundle the compiled suite SUITE_DIR with its spec, sources, licences, dataset card and hashes."),
    "diff": ("spec_audits.runner.commands.publish.cli", "diff",
             "Show what changed from suite A to suite B (compiled suites or bundles): rows and manifest fields."),
    "export": ("spec_audits.runner.commands.publish.cli", "export",
               "Export the compiled suite SUITE_DIR for inspect_ai, promptfoo, Hugging Face datasets or as CSV."),
    "run": ("spec_audits.runner.commands.run_cli", "run",
            "Run every (item, sample) of the compiled suite SUITE_DIR against a model."),
    "merge": ("spec_audits.runner.commands.run_cli", "merge",
              "Merge shard runs of one suite (same model and mode) into OUT, one row per (item, sample)."),
    "score": ("spec_audits.runner.dispatch.score_cli", "score",
              "Score RUN_DIR... (suite + results), a counts table with --counts, or a per-cell table with --cells."),
    "import": ("spec_audits.runner.dispatch.import_cli", "import_cmd",
               "Import another harness's published files into a run or score folder."),
    "report": ("spec_audits.runner.dispatch.score_cli", "report",
               "Write report.html (self-contained) and report.md with PNG plots from a `spec score` folder."),
    "view": ("spec_audits.runner.commands.view_cli", "view",
             "Write view.html: headline figures, cells, rows and every row's transcript, with filters."),
    "plan": ("spec_audits.runner.dispatch.plan_cli", "plan_cmd",
             "Plan an audit before paying for it: what it can detect, and what a target effect costs."),
    "doctor": ("spec_audits.runner.commands.doctor", "doctor",
               "Print what a bug report needs and test that the embedded model runs on this CPU."),
    "generate": ("spec_audits.runner.commands.generate_cli", "generate",
                 "Write data with a model and keep what a jury accepts, frozen into a hashed CSV the spec can read."),
}


# Commands that leave nothing behind to finish (no file written, no thread, no temporary folder): in the `spec`
# program itself their process ends without the interpreter's teardown (`run`), as does one that ran no command (the
# group's --help and --version, a usage error).
LEAVE_AT_ONCE = frozenset({"check", "show"})
# Commands that run with the garbage collector paused, as all they make lives until they end (compiler/commands/cli.py):
# in the `spec` program it stays paused to the end, where re-enabling it would walk all they made (10M of check's 868M).
PAUSED_TO_THE_END = frozenset({"check"})


class LazyGroup(click.Group):
    """A group that imports a command's module when the command is looked up, not before."""

    resolved: str | None = None  # the command this process last looked up to run (`run` reads it)
    leaving = False  # set by `run`: this process ends when the command does

    def resolve_command(self, ctx: click.Context, args: list[str]) -> tuple[str | None, click.Command | None,
                                                                          list[str]]:
        if self.leaving and args[0] in PAUSED_TO_THE_END:  # from before its module is imported
            gc.disable()
        name, command, rest = super().resolve_command(ctx, args)
        self.resolved = name
        return name, command, rest

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(set(COMMANDS) | set(self.commands))

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name in self.commands or cmd_name not in COMMANDS:
            return self.commands.get(cmd_name)
        module, attribute, _ = COMMANDS[cmd_name]
        with collector_paused():  # importing makes only objects kept for the process's life: no cycle to free
            command: click.Command = getattr(importlib.import_module(module), attribute)
        return command

    def invoke(self, ctx: click.Context) -> object:
        """Run the command under the one error policy (user_errors.py): a message, never a traceback."""
        try:
            return super().invoke(ctx)
        except (click.exceptions.Exit, click.exceptions.Abort):
            raise
        except Exception as err:
            from spec_audits.cli.user_errors import user_error

            problem = user_error(err)
            if problem is None:
                raise
            raise problem from None

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        names = self.list_commands(ctx)
        limit = formatter.width - 6 - max(map(len, names))  # as click.Group lays out its commands
        rows = [(name, _shortened(COMMANDS[name][2], limit) if name in COMMANDS
                 else self.commands[name].get_short_help_str(limit)) for name in names]
        with formatter.section("Commands"):
            formatter.write_dl(rows)


def _shortened(text: str, limit: int) -> str:
    """`text` cut at a word boundary to fit `limit` characters, with "..." where it was cut."""
    if len(text) <= limit:
        return text
    words, kept = text.split(), ""
    for word in words:
        if len(f"{kept} {word}".strip()) + 3 > limit:
            break
        kept = f"{kept} {word}".strip()
    return kept + "..."


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]},
             epilog=f"{exits.HELP} Details: docs/running.md, \"Exit status\".")
@click.version_option(package_name="spec-audits", prog_name="spec")
def main() -> None:
    """spec: compile, run and score LLM influence and bias audits.

    \b
    Typical session:
      spec check specs/triage.spec
      spec compile specs/triage.spec -o generated/triage
      spec show generated/triage
      spec run generated/triage --limit 200 --out runs/triage-local
      spec score runs/triage-local
      spec bundle generated/triage -o triage.tar.gz   # publish; spec verify checks it
      spec doctor                 # what a bug report needs
    """


def run(prog_name: str | None = None) -> None:
    """The `spec` program (its console entry and `python -m spec_audits.cli`): `main`, and then, after a command of
    LEAVE_AT_ONCE or none, the end of the process once its output is flushed, without the interpreter's teardown
    (freeing every module's objects one by one: 62M instructions of `spec check specs/triage.spec`'s 969M, 43M of
    `spec show`, 23M of `spec --help`'s 216M). Never where another program calls `main` (CliRunner, a script): its
    process goes on."""
    main.resolved, main.leaving = None, True
    try:
        main(prog_name=prog_name)
    except SystemExit as done:
        if (main.resolved is None or main.resolved in LEAVE_AT_ONCE) and isinstance(done.code, int):
            _leave(done.code)
        raise


def _leave(status: int) -> None:
    """os._exit(status) once stdout and stderr are flushed; nothing where that is not safe, and the interpreter
    ends as it always has: a debugger, profiler or coverage tracer is watching, or coverage is loaded at all (they
    write their findings at the end; coverage on Python 3.12's sys.monitoring sets no tracer), another thread is
    still running (Python waits for it), click has wrapped a closed pipe's streams, or a flush fails (a closed
    pipe: the interpreter's own flush then reports it, exit status 120, as without this)."""
    if sys.gettrace() is not None or sys.getprofile() is not None or "coverage" in sys.modules:
        return
    if "threading" in sys.modules and sys.modules["threading"].active_count() > 1:
        return
    if sys.stdout is not sys.__stdout__ or sys.stderr is not sys.__stderr__:
        return
    try:
        for stream in (sys.stdout, sys.stderr):
            if stream is not None:
                stream.flush()
    except (OSError, ValueError):
        return
    os._exit(status)
