"""`spec score` and `spec report`: dispatch a run, a counts table or a score folder to its design family."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click
from click.core import ParameterSource

from spec_audits.families import registry
from spec_audits.families.interface import Family
from spec_audits.runner.score_input import ScoreInputError, require_answers, run_family
from spec_audits.runner.study import expand_runs
from spec_audits.terminal import echo

COUNTS_FAMILY = "influence_pairs"  # published counts tables (docs/suite-format.md) are influence tables
CELLS_FAMILY = "bias_decomposition"  # published per-cell tables are conditional-bias tables (docs/cognitive-bias.md)


@click.command("score")
@click.argument("run_dirs", nargs=-1, type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option(
    "--counts",
    "counts_file",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="Score a counts table (docs/suite-format.md, \"Counts tables\") instead of a run folder.",
)
@click.option(
    "--cells",
    "cells_file",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="Re-score a published per-cell table of a conditional-bias audit (docs/cognitive-bias.md): what cell "
    "moments determine; DiD, SCM, matched PSM and the mixed model need per-row data.",
)
@click.option(
    "-o",
    "--out",
    type=click.Path(file_okay=False, path_type=Path),
    help="Output folder [default: RUN_DIR/score (a study's too), or FILE's folder/<stem>-score; "
    "required for several folders].",
)
@click.option("--alpha", type=float, default=None, help="Significance level [manifest analysis.alpha or 0.05].")
@click.option(
    "--asym-variance",
    type=click.Choice(["2v0", "4v0"]),
    default="2v0",
    show_default=True,
    help="Var(Asym) = V_A + V_B + 2V_0 (paper's repository) or + 4V_0 (exact delta method).",
)
@click.option("--unpooled", is_flag=True, help="Unpooled SE in the two-proportion z test (default pooled).")
@click.option("--bootstrap", type=int, default=None, help="Cluster-bootstrap resamples [manifest or 5000].")
@click.option("--seed", type=int, default=0, show_default=True, help="Bootstrap seed.")
@click.option(
    "--noise",
    "noise_dir",
    multiple=True,
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    help="Baseline-replicate run or study folders (spec run --replicate 1 --only condition=baseline), each "
    "paired with the scored run of its model: adds the noise floor (App. N). Repeatable.",
)
@click.option("--noise-f0", type=click.Choice(["paper", "release"]), default=None,
              help="Noise drift of f0 = share choosing group B (paper, default) or the second option of each "
              "comparison's key (release).")
@click.option("--noise-flips", type=click.Choice(["prompt", "comparison"]), default=None,
              help="Modal flips per prompt (comparison x display order, default) or per comparison pooled over "
              "display orders (release).")
@click.option(
    "--parent",
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    help="Follow-up probe runs: the main run's score folder, whose conditions give each probed trial its kind.",
)
@click.option(
    "--human-labels",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="With --parent: CSV item_id,sample,label of human-labelled probe replies, to check the judge against.",
)
@click.option("--turn", metavar="NAME",
              help="Conversations: score the answers of answered turn NAME (e.g. first) instead of the rows' own.")
@click.pass_context
def score(ctx: click.Context, run_dirs: tuple[Path, ...], counts_file: Path | None, cells_file: Path | None,
          out: Path | None, **options: Any) -> None:
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
    if sum((bool(run_dirs), counts_file is not None, cells_file is not None)) != 1:
        raise click.UsageError("give one of RUN_DIR..., --counts FILE.csv or --cells FILE.csv")
    if run_dirs:
        if out is None and len(run_dirs) > 1:
            raise click.UsageError("scoring several folders together needs -o OUT")
        lines = _score_runs(ctx, expand_runs(run_dirs), out or run_dirs[0] / "score", options)
    else:
        table = counts_file or cells_file
        assert table is not None
        family = _family(COUNTS_FAMILY if counts_file else CELLS_FAMILY, table)
        scorer = family.score_counts if counts_file else family.score_cells
        assert scorer is not None
        _refuse_options(ctx, family, "a counts table" if counts_file else "a per-cell table")
        lines = scorer(table, out or table.parent / f"{table.stem}-score", options)
    for line in lines:
        echo(line)


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
    require_answers(runs)
    if len(runs) == 1:
        return family.score(runs[0], out, options)
    if family.score_runs is None:
        raise click.UsageError(f"{family.name} scoring takes one run at a time")
    return family.score_runs(runs, out, options)


def _family(name: str, source: Path) -> Family:
    family = registry.get(name)
    if family is None:
        raise ScoreInputError(source, f"analysis family '{name}' is unknown to this version "
                              f"(known: {', '.join(registry.names())})")
    return family


def _refuse_options(ctx: click.Context, family: Family, what: str) -> None:
    """Say which given options the family does not read, instead of ignoring them."""
    options = [p for p in ctx.command.params
               if isinstance(p, click.Option) and p.name not in ("out", "counts_file", "cells_file")]
    given = [p for p in options if p.name not in family.score_options
             and ctx.get_parameter_source(str(p.name)) is not ParameterSource.DEFAULT]
    if given:
        verb = "does" if len(given) == 1 else "do"
        takes = ", ".join(_flag(p) for p in options if p.name in family.score_options) or "no options"
        raise click.UsageError(f"{', '.join(_flag(p) for p in given)} {verb} not apply to {what}: "
                               f"{family.name} scoring takes {takes}")


def _flag(option: click.Option) -> str:
    return next(o for o in option.opts if o.startswith("--"))


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
    from spec_audits.runner.report.build import build_report, score_folder

    score_dir = score_folder(score_dir)
    paths = build_report(score_dir, out or score_dir)
    for path in paths:
        echo(str(path))
