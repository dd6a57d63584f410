"""Compiler commands: spec check, spec compile, spec show."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from spec_audits.base.collector import collector_paused
from spec_audits.base.terminal import echo, visible
from spec_audits.compiler.budget import DEFAULT_BUDGET, Budget
from spec_audits.compiler.errors import SpecError

if TYPE_CHECKING:
    from spec_audits.contract.reader import Suite
    from spec_audits.contract.suite_model import SuiteRow


class SpecFailed(click.ClickException):
    """A spec with mistakes: the rendered diagnostics, exit status 1."""

    own_lines = True  # each diagnostic's lines, a spec's control characters shown as escapes

    def format_message(self) -> str:
        return self.message

    def show(self, file: Any = None) -> None:
        click.echo(self.message, err=True)


def _fail(err: SpecError) -> SpecFailed:
    return SpecFailed(err.render())


def spec_options(command: Any) -> Any:
    """The file access and budget options of every command that loads a spec someone else may have written."""
    options = (
        click.option("--allow-path", "allowed", multiple=True, metavar="DIR",
                     type=click.Path(path_type=Path, file_okay=False, exists=True),
                     help="Let the spec read imports and data under DIR too (repeatable); "
                          "by default only under the spec's own folder."),
        click.option("--max-rows", type=click.IntRange(min=1), default=DEFAULT_BUDGET.rows, show_default=True,
                     help="Refuse a suite with more rows (prompts)."),
        click.option("--max-trials", type=click.IntRange(min=1), default=DEFAULT_BUDGET.trials, show_default=True,
                     help="Refuse a suite with more trials (rows x samples)."),
        click.option("--max-seconds", type=click.FloatRange(min=0, min_open=True), default=DEFAULT_BUDGET.seconds,
                     show_default=True, help="Refuse a suite whose compile is estimated to take longer "
                                             "(counted on a sample of its rows at a fixed reference pace: "
                                             "the same on every machine)."),
    )
    for option in reversed(options):
        command = option(command)
    return command


def _budget(max_rows: int, max_trials: int, max_seconds: float) -> Budget:
    return Budget(rows=max_rows, trials=max_trials, seconds=max_seconds)


@click.command()
@click.argument("spec_file", type=click.Path(path_type=Path, dir_okay=False))
@click.option("--seed", type=int, default=None, help="Override the spec's seed.")
@spec_options
def check(spec_file: Path, seed: int | None, allowed: tuple[Path, ...], max_rows: int, max_trials: int,
          max_seconds: float) -> None:
    """Check a spec for mistakes without writing anything.

    Reports every error at once, each with file:line:column, the line, a caret
    and a hint. Exit status 0 when the spec is clean, 1 otherwise.

    \b
    Example:
      spec check specs/triage.spec
    """
    # A check keeps what it makes (modules, the parser, the spec's tree, a bounded sample of rows) and exits: the
    # collector's passes over it would find no cycle to free (about a tenth of check's CPU).
    with collector_paused():
        from spec_audits.compiler.dispatch.build import check_file  # `spec show` never loads the compile stages

        try:
            checked = check_file(spec_file, seed, allowed, _budget(max_rows, max_trials, max_seconds))
        except SpecError as err:
            raise _fail(err) from None
    for design in checked.designs:
        echo(f"{spec_file}: design '{design.name}' is valid: {design.summary()}")
    if checked.size is not None:
        echo(f"{spec_file}: planned size: {checked.size.describe()}")
        echo(f"{spec_file}: estimated compile time: {checked.size.describe_time()}")


@click.command("compile")
@click.argument("spec_file", type=click.Path(path_type=Path, dir_okay=False))
@click.option("-o", "--out", "out_dir", type=click.Path(path_type=Path, file_okay=False), default=None,
              help="Output folder [default: generated/<suite name>].")
@click.option("--seed", type=int, default=None, help="Override the spec's seed.")
@spec_options
def compile_cmd(spec_file: Path, out_dir: Path | None, seed: int | None, allowed: tuple[Path, ...],
                max_rows: int, max_trials: int, max_seconds: float) -> None:
    """Compile a spec into a frozen, hashed stimulus suite.

    Writes suite.jsonl (one row per unique prompt, sorted by id), schema.json and
    manifest.json. The same spec, seed and compiler version always give
    byte-identical files. The folder is replaced atomically: a failed compile
    never leaves a half-written suite behind.

    \b
    Example:
      spec compile specs/triage.spec -o generated/triage
    """
    from spec_audits.compiler.dispatch.build import compile_file

    try:
        manifest, target = compile_file(spec_file, out_dir, seed, progress=True, allowed=allowed,
                                        budget=_budget(max_rows, max_trials, max_seconds))
    except SpecError as err:
        raise _fail(err) from None
    echo(f"compiled {manifest.suite}: {manifest.rows} prompts, {manifest.trials} trials -> {target}")
    for balance in manifest.balance:
        keys = " x ".join(balance.keys)
        echo(f"balanced: {balance.cells} cells ({keys}), {balance.trials_per_cell} trials each")


@click.command()
@click.argument("suite_dir", type=click.Path(path_type=Path, file_okay=False))
@click.option("-n", "--items", default=3, show_default=True, help="How many rendered items to print.")
@click.option("--cell", "cell_filter", multiple=True, metavar="KEY=VALUE",
              help="Only show items whose cell matches, e.g. --cell influence=few_shot.")
def show(suite_dir: Path, items: int, cell_filter: tuple[str, ...]) -> None:
    """Show a compiled suite: trials per cell and items exactly as the model sees them.

    \b
    Example:
      spec show generated/triage -n 2 --cell influence=user_preference
    """
    from spec_audits.contract.reader import read_suite  # `spec check` and `spec compile` never read a suite

    suite = read_suite(suite_dir)
    manifest = suite.manifest
    echo(f"suite {manifest.suite}: {manifest.rows} prompts, {manifest.trials} trials, "
         f"seed {manifest.seed}, compiler {manifest.compiler_version}")
    _print_cells(suite)
    wanted = dict(_split_filter(f) for f in cell_filter)
    chosen = [r for r in suite.rows if all(str(r.cell.get(k)) == v for k, v in wanted.items())]
    if not chosen:
        raise click.ClickException(f"no item matches {', '.join(cell_filter)}")
    step = max(len(chosen) // max(items, 1), 1)
    for row in chosen[::step][:items]:
        _print_item(row)


def _split_filter(text: str) -> tuple[str, str]:
    if "=" not in text:
        raise click.BadParameter(f"'{text}' is not KEY=VALUE", param_hint="--cell")
    key, value = text.split("=", 1)
    return key, value


def _print_cells(suite: Suite) -> None:
    """Trials per balanced cell (the manifest's balance keys); rows shared by every value print '(shared)'."""
    strata = suite.strata or ["condition"]
    keys = [visible(k) for k in strata]
    raw: Counter[tuple[str | None, ...]] = Counter()
    for row in suite.rows:
        raw[tuple(_as_text(row.cell.get(k)) for k in strata)] += row.samples
    trials: Counter[tuple[str, ...]] = Counter()
    for values, count in raw.items():  # each distinct cell made safe for the terminal once, not once a row
        trials[tuple(map(_cell_text, values))] += count
    widths = [max(len(k), *(len(key[i]) for key in trials)) + 2 for i, k in enumerate(keys)]
    click.echo()
    click.echo("".join(k.ljust(w) for k, w in zip(keys, widths, strict=True)) + "trials".rjust(8))
    for key, count in sorted(trials.items()):
        click.echo("".join(v.ljust(w) for v, w in zip(key, widths, strict=True)) + str(count).rjust(8))


def _as_text(value: Any) -> str | None:
    return None if value is None else str(value)


def _cell_text(value: str | None) -> str:
    return "(shared)" if value is None else visible(value)


def _print_item(row: SuiteRow) -> None:
    cell = ", ".join(f"{k}={v}" for k, v in row.cell.items())
    click.echo()
    echo(f"=== item {row.id}  ({cell})  samples={row.samples}  answers={row.answers}")
    for message in row.messages:
        content = "<generated by the model>" if message.generate else message.content
        echo(f"--- {message.role}\n{content}", keep_newlines=True)
