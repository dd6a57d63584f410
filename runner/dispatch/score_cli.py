"""`spec score` and `spec report`: dispatch a run, a published table or a score folder to its design family.

`spec score` knows no family: its table options (`--counts FILE`, ...) are the table kinds the families
declare (Family.tables) and its other options the ones they add (Family.score_flags)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click
from click.core import ParameterSource

from spec_audits.base.terminal import echo
from spec_audits.dispatch import registry
from spec_audits.runner.score_input import ScoreInputError, check_run_analysis, require_answers, run_family
from spec_audits.runner.study import expand_runs
from spec_audits.runner.turn_report import write_turn_statistics
from spec_audits.runner.turn_runs import moved_runs
from spec_audits.sdk.interface import Family, TableKind

TURN = click.Option(["--turn"], metavar="NAME", help="Conversations: score the answers of answered turn NAME (e.g. "
                    "first) instead of the rows' own, whatever the design's family.")
OUT = click.Option(
    ["-o", "--out"],
    type=click.Path(file_okay=False, path_type=Path),
    help="Output folder [default: RUN_DIR/score (a study's too), or FILE's folder/<stem>-score; "
    "required for several folders].",
)


def score_command() -> click.Command:
    """`spec score`, with the table kinds and the options of every family that loads (registry.loadable)."""
    families = registry.loadable()
    kinds = [(family, kind) for family in families for kind in family.tables]
    flags = {str(flag.name): flag for family in families for flag in family.score_flags}

    @click.command("score")
    @click.argument("run_dirs", nargs=-1, type=click.Path(exists=True, file_okay=False, path_type=Path))
    @click.pass_context
    def score(ctx: click.Context, /, run_dirs: tuple[Path, ...], out: Path | None, **options: Any) -> None:
        """Score RUN_DIR... (suite + results), a counts table with --counts, or a per-cell table with --cells.

        Several run folders, or a study folder (spec run with several --model), are scored together: one
        conditions table keyed by benchmark, model and reasoning setting, BH-FDR across all of them.
        The runs' suites name their analysis family; options the family does not read are refused.

        \b
        Examples:
          spec score runs/triage-local
          spec score runs/triage-study
          spec score runs/triage-gpt-4o-mini runs/bbq-gpt-4o-mini -o scores/gpt-4o-mini
          spec score runs/triage-study --noise runs/triage-replicates --noise-f0 release
          spec score --counts published_counts.csv -o scores/published
          spec score --cells cells_content.csv

        Exit status: 0 scored; 5 the runs hold no answered item (nothing to
        score); 1 and 2 as for every command (docs/running.md, "Exit status").
        """
        tables = {kind.name: (family, kind, options.pop(_dest(kind))) for family, kind in kinds}
        given = [(family, kind, file) for family, kind, file in tables.values() if file is not None]
        if len(given) + bool(run_dirs) != 1:
            choices = ["RUN_DIR...", *(f"--{kind.name} FILE.csv" for _, kind in kinds)]
            raise click.UsageError(f"give one of {', '.join(choices[:-1])} or {choices[-1]}")
        if run_dirs:
            out, lines = _score_folders(ctx, run_dirs, out, options)
            scored = " ".join(map(str, run_dirs))
        else:
            out, lines = _score_table(ctx, given[0], out, options)
            scored = str(out)
        for line in lines:
            echo(line)
        from spec_audits.runner.dispatch.build import score_lines

        for line in score_lines(out, scored):  # after the family's lines: an unreadable report fails after them
            echo(line)

    score.params.extend([*(_table_option(kind) for _, kind in kinds), OUT, TURN, *flags.values()])
    return score


def _dest(kind: TableKind) -> str:
    return f"{kind.name}_file"


def _table_option(kind: TableKind) -> click.Option:
    return click.Option([f"--{kind.name}", _dest(kind)], type=click.Path(exists=True, dir_okay=False, path_type=Path),
                        help=kind.help)


def _score_folders(ctx: click.Context, run_dirs: tuple[Path, ...], out: Path | None,
                   options: dict[str, Any]) -> tuple[Path, list[str]]:
    """`spec score RUN_DIR...` (runs, or a study's): their score folder and the family's lines."""
    if out is None and len(run_dirs) > 1:
        raise click.UsageError("scoring several folders together needs -o OUT")
    out = out or run_dirs[0] / "score"
    return out, _score_runs(ctx, expand_runs(run_dirs), out, options)


def _score_table(ctx: click.Context, given: tuple[Family, TableKind, Path], out: Path | None,
                 options: dict[str, Any]) -> tuple[Path, list[str]]:
    """`spec score --NAME FILE`: the table scored by the family that offers its kind; its folder and lines."""
    family, kind, table = given
    _refuse_options(ctx, family, kind.what)
    if options.pop("turn") is not None:
        raise click.UsageError(f"--turn reads the answered turns of a run: {kind.what} has none")
    out = out or table.parent / f"{table.stem}-score"
    return out, kind.score(table, out, options)


def _score_runs(ctx: click.Context, runs: list[Path], out: Path, options: dict[str, Any]) -> list[str]:
    if not runs:
        raise click.UsageError("the study lists no runs yet: spec run writes them")
    families = {run: run_family(run, registry.DEFAULT) for run in runs}
    family = _family(families[runs[0]], runs[0] / "run.json")
    other = next((run for run in runs if families[run] != family.name), None)
    if other is not None:
        raise ScoreInputError(other / "run.json", f"is a {families[other]} run, {runs[0]} a {family.name} run: "
                              "score each family separately")
    _refuse_options(ctx, family, f"{family.name} runs")
    for run in runs:
        check_run_analysis(run, family.record_type())
    require_answers(runs, replies=family.reads_replies)
    if len(runs) > 1 and family.score_runs is None:
        raise click.UsageError(f"{family.name} scoring takes one run at a time")
    turn = options.pop("turn", None)
    scored = runs if turn is None else moved_runs(runs, turn, out)
    if family.score_runs is None or len(scored) == 1:
        lines = family.score(scored[0], out, options)
    else:
        lines = family.score_runs(scored, out, options)
    return lines + write_turn_statistics(runs, out)  # every family's conversations (runner/turn_report.py)


def _family(name: str, source: Path) -> Family:
    family = registry.get(name)
    if family is None:
        raise ScoreInputError(source, f"analysis family '{name}' is unknown to this version "
                              f"(known: {', '.join(registry.names())})")
    return family


def _refuse_options(ctx: click.Context, family: Family, what: str) -> None:
    """Say which given options the family does not read, instead of ignoring them."""
    tables = {_dest(kind) for family in registry.loadable() for kind in family.tables}
    options = [p for p in ctx.command.params
               if isinstance(p, click.Option) and p.name not in ("out", "turn") and p.name not in tables]
    given = [p for p in options if p.name not in family.reads()
             and ctx.get_parameter_source(str(p.name)) is not ParameterSource.DEFAULT]
    if given:
        verb = "does" if len(given) == 1 else "do"
        takes = ", ".join(_flag(p) for p in options if p.name in family.reads()) or "no options"
        raise click.UsageError(f"{', '.join(_flag(p) for p in given)} {verb} not apply to {what}: "
                               f"{family.name} scoring takes {takes}")


def _flag(option: click.Option) -> str:
    return next(o for o in option.opts if o.startswith("--"))


def __getattr__(name: str) -> click.Command:
    """`score` is built when the command line asks for it, so that it shows every family registered by then."""
    if name == "score":
        return score_command()
    raise AttributeError(name)


@click.command("report")
@click.argument("score_dir", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option(
    "-o",
    "--out",
    type=click.Path(file_okay=False, path_type=Path),
    help="Output folder [default: SCORE_DIR].",
)
def report(score_dir: Path, out: Path | None) -> None:
    """Write report.html (self-contained) and report.md with PNG plots from a `spec score` folder.

    SCORE_DIR is the folder `spec score` wrote, or a run folder whose score/ it wrote.

    \b
    Examples:
      spec report runs/triage-local/score
      spec report runs/triage-local
    """
    from spec_audits.runner.dispatch.build import build_report, score_folder

    score_dir = score_folder(score_dir)
    paths = build_report(score_dir, out or score_dir)
    for path in paths:
        echo(str(path))
