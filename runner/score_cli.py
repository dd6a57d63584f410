"""`spec score` and `spec report`: score an influence run or a published counts table, then render it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from runner.score.counts import counts_from_trials, read_counts_csv
from runner.score.influence import Options
from runner.score.noise import noise_floor
from runner.score.pipeline import score as score_counts
from runner.score.pipeline import write
from runner.score.runs import load_run
from runner.score_cue.load import is_cue_run, load_cue_run
from runner.score_cue.outputs import score_run


@click.command("score")
@click.argument("run_dir", required=False, type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option(
    "--counts",
    "counts_file",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="Score a counts table (suite-format.md) instead of a run folder.",
)
@click.option(
    "-o",
    "--out",
    type=click.Path(file_okay=False, path_type=Path),
    help="Output folder [default: RUN_DIR/score, or FILE's folder/<stem>-score].",
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
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    help="A baseline-replicate run folder: adds the noise floor (App. N).",
)
def score(
    run_dir: Path | None,
    counts_file: Path | None,
    out: Path | None,
    alpha: float | None,
    asym_variance: str,
    unpooled: bool,
    bootstrap: int | None,
    seed: int,
    noise_dir: Path | None,
) -> None:
    """Score RUN_DIR (suite + results), or a counts table with --counts: conditions.csv + summary.json.

    \b
    Examples:
      spec score runs/triage-local
      spec score --counts published_counts.csv -o scores/published
    """
    if (run_dir is None) == (counts_file is None):
        raise click.UsageError("give either RUN_DIR or --counts FILE.csv")
    if run_dir is not None and is_cue_run(run_dir):
        _score_cue(run_dir, out or run_dir / "score")
        return
    analysis: dict[str, Any] = {}
    noise = None
    if run_dir is not None:
        run = load_run(run_dir)
        analysis = run.analysis
        counts = counts_from_trials(run.trials, run.keys, run.source)
        if noise_dir is not None:
            noise = noise_floor(run, load_run(noise_dir))
        out = out or run_dir / "score"
    else:
        assert counts_file is not None
        if noise_dir is not None:
            raise click.UsageError("--noise needs a RUN_DIR, not a counts table")
        counts = read_counts_csv(counts_file)
        out = out or counts_file.parent / f"{counts_file.stem}-score"
    options = Options(
        alpha=alpha if alpha is not None else float(analysis.get("alpha", 0.05)),
        asym_variance=asym_variance,  # type: ignore[arg-type]
        pooled_z=not unpooled,
        bootstrap=bootstrap if bootstrap is not None else int(analysis.get("bootstrap", 5000)),
        seed=seed,
    )
    scores = score_counts(counts, options, noise)
    write(scores, out)
    click.echo(f"{len(scores.conditions)} conditions scored ({scores.summary['count_source_text']}) -> {out}")
    for bench, result in scores.summary["benchmarks"].items():
        click.echo(_headline_line(bench, result["headline"]))


def _score_cue(run_dir: Path, out: Path) -> None:
    summary = score_run(load_cue_run(run_dir), out)
    models = len(summary["models"])
    click.echo(f"{summary['answers']} cue-visibility answers scored ({models} model{'s' * (models != 1)}) -> {out}")


def _headline_line(bench: str, headline: dict[str, Any]) -> str:
    shift = headline["mean_abs_shift"]["all"]
    asym = headline["asymmetry_among_neutral"]["binomial"]["raw"]
    bf = headline["backfire_among_significant"]
    return (
        f"  {bench}: mean |shift| {_pp(shift['mean_pp'])} p; "
        f"sig. asymmetry among baseline-neutral {_pct(asym['rate'])} ({asym['k']}/{asym['n']}); "
        f"backfire among significant {_pct(bf['rate'])} ({bf['k']}/{bf['n']})"
    )


def _pp(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.1f}"


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{100 * value:.1f}%"


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

    \b
    Example:
      spec report runs/triage-local/score
    """
    from runner.report.build import build_report

    paths = build_report(score_dir, out or score_dir)
    for path in paths:
        click.echo(str(path))
