"""`spec run` and `spec merge`."""

from __future__ import annotations

import os
from pathlib import Path

import click

from runner.batch.cli import batch_options, dry_run_lines, show_batches
from runner.call import VERBOSE_ENV, FatalError
from runner.contract import read_suite
from runner.execute import run_suite
from runner.merge import MergeError, merge_runs
from runner.plan import Shard, estimate, plan
from runner.run_config import DEFAULT_MODEL, RunConfig, RunError
from runner.study import record_study, slug, study_configs


def _shard(ctx: click.Context, param: click.Parameter, value: str | None) -> Shard | None:
    try:
        return Shard.parse(value) if value else None
    except ValueError as err:
        raise click.BadParameter(str(err)) from None


def _default_out(suite_dir: Path, name: str, shard: Shard | None) -> Path:
    suffix = f"-shard{shard.index}of{shard.count}" if shard else ""
    return Path("runs") / f"{suite_dir.resolve().name}-{name}{suffix}"


def _dry_run(config: RunConfig) -> None:
    suite = read_suite(config.suite_dir)
    mode = config.mode or suite.manifest.mode
    items = plan(suite.rows, mode=mode, limit=config.limit, seed=config.seed, shard=config.shard, strata=suite.strata)
    click.echo(f"{suite.manifest.suite}: {len(items)} answers to obtain ({mode} mode); nothing is called")
    estimates = estimate(items, mode=mode, model=config.model, judge_model=config.judge_model)
    for entry in estimates:
        cost = "unknown (not in litellm's cost map)" if entry.cost_usd is None else f"${entry.cost_usd:,.4f}"
        click.echo(
            f"  {entry.model}: {entry.calls} calls, ~{entry.prompt_tokens:,} prompt tokens, "
            f"<= {entry.completion_tokens:,} completion tokens, cost {cost}"
        )
    for line in dry_run_lines(estimates, config.batch_size) if config.batch else []:
        click.echo(line)


@click.command("run")
@click.argument("suite_dir", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option(
    "--model",
    "models",
    multiple=True,
    default=(DEFAULT_MODEL,),
    show_default=True,
    help="Any litellm model string; local/<path.gguf> for another GGUF. Keys come from the environment. "
    "Give it several times for a study: one run per model in one folder.",
)
@click.option("--api-base", help="Base URL of an OpenAI-compatible server (e.g. http://127.0.0.1:8000/v1).")
@click.option(
    "--out",
    type=click.Path(file_okay=False, path_type=Path),
    help="Run folder [default: runs/<suite>-<model>, or runs/<suite>-study for several models or reasoning "
    "settings]. Rerunning the same command resumes it.",
)
@click.option("--mode", type=click.Choice(["sample", "logprob"]), help="Override the suite's mode.")
@click.option("--limit", type=click.IntRange(min=1), help="Run a seeded subset of N rows stratified over cells.")
@click.option("--seed", default=0, show_default=True, help="Seed of the --limit subset.")
@click.option("--shard", callback=_shard, metavar="I/N", help="Run shard I of N (1-based, split by item id).")
@click.option("--concurrency", default=8, show_default=True, type=click.IntRange(min=1))
@click.option("--rpm", type=click.FloatRange(min=0, min_open=True), help="Requests per minute, per model.")
@click.option("--tpm", type=click.FloatRange(min=0, min_open=True), help="Tokens per minute, per model.")
@click.option(
    "--timeout",
    "timeout_s",
    default=120.0,
    show_default=True,
    type=click.FloatRange(min=0, min_open=True),
    help="Seconds per call.",
)
@click.option(
    "--max-retries",
    default=6,
    show_default=True,
    type=click.IntRange(min=0),
    help="Retries on 429, 5xx, timeouts and dropped connections.",
)
@click.option(
    "--retry-base",
    "retry_base_s",
    default=1.0,
    show_default=True,
    type=click.FloatRange(min=0),
    help="First backoff delay in seconds (doubles each retry, with jitter).",
)
@click.option(
    "--reasks",
    default=0,
    show_default=True,
    type=click.IntRange(min=0, max=100),
    help="Re-ask an invalid answer up to N times (seed 000 used 10).",
)
@click.option("--judge-model", help="litellm model that labels follow-up replies when the suite names none.")
@click.option("--max-tokens", type=click.IntRange(min=1), help="Override the suite's max_tokens.")
@click.option("--reasoning-effort", "efforts", multiple=True,
              help="Pass reasoning_effort (e.g. low, medium, high) to the model; several give one run per setting.")
@click.option(
    "--cache",
    "cache_path",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Response cache file [default: $SPEC_RESPONSE_CACHE or <user cache>/spec/responses.sqlite].",
)
@click.option("--no-cache", is_flag=True, help="Neither read nor write the response cache.")
@click.option("--retry-failed", is_flag=True, help="Re-attempt items recorded as failed.")
@click.option("--dry-run", is_flag=True, help="Print calls, tokens and estimated cost per model; call nothing.")
@click.option("--progress/--no-progress", default=True,
              help="Show progress: a bar on a terminal, a line every tenth of the way otherwise.")
@click.option("--verbose", is_flag=True, help="Show llama.cpp's own log lines when the embedded model loads.")
@batch_options
def run(suite_dir: Path, out: Path | None, no_cache: bool, dry_run: bool, verbose: bool, models: tuple[str, ...],
        efforts: tuple[str, ...], batch_action: str | None, **options: object) -> None:
    """Run every (item, sample) of the compiled suite SUITE_DIR against a model.

    Without --model the embedded offline model (gemma-3-270m, in-process) answers.
    Answers are appended to OUT/results.jsonl as they arrive; running the same
    command again resumes where it stopped, and identical calls come from the
    response cache.

    \b
    Examples:
      spec run generated/triage --limit 150 --out runs/triage-local
      spec run generated/triage --model openai/gpt-4o-mini --dry-run
      spec run generated/triage --model openrouter/qwen/qwen3-235b-a22b-2507 --shard 1/4
      spec run generated/triage --model openai/gpt-4o-mini --model openai/gpt-4.1 --out runs/triage-study
      spec run generated/triage --model openai/gpt-4o-mini --batch      (again, or with --status, later)
    """
    if verbose:
        os.environ[VERBOSE_ENV] = "1"
    runs: tuple[str | None, ...] = efforts or (None,)
    study = len(models) * len(runs) > 1
    out = out or _default_out(suite_dir, "study" if study else slug(models[0]), options["shard"])  # type: ignore[arg-type]
    config = RunConfig(suite_dir=suite_dir, out=out, use_cache=not no_cache, model=models[0],
                       reasoning_effort=runs[0], **options)  # type: ignore[arg-type]
    configs = study_configs(config, models, runs) if study else [config]
    if study and not dry_run and not batch_action:
        record_study(out, suite_dir, [c.out.name for c in configs])
    for each in configs:
        _run_one(each, dry_run, batch_action)


def _run_one(config: RunConfig, dry_run: bool, action: str | None = None) -> None:
    try:
        if action:
            show_batches(config, action)
            return
        if dry_run:
            _dry_run(config)
            return
        summary = run_suite(config)
    except RunError as err:
        raise click.ClickException(str(err)) from None
    except FatalError as err:
        raise click.ClickException(f"run stopped: {err}") from None
    resumed = f", {summary.resumed} from an earlier run" if summary.resumed else ""
    click.echo(
        f"{summary.run_dir}: {summary.done} answered, {summary.failed} failed of {summary.planned} "
        f"({summary.mode} mode{resumed}); {summary.calls} calls, {summary.cache_hits} cache hits"
    )


@click.command("merge")
@click.argument("run_dirs", nargs=-1, required=True, type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--out", required=True, type=click.Path(file_okay=False, path_type=Path), help="Merged run folder.")
def merge(run_dirs: tuple[Path, ...], out: Path) -> None:
    """Merge shard runs of one suite (same model and mode) into OUT, one row per (item, sample).

    \b
    Example:
      spec merge runs/triage-s1 runs/triage-s2 --out runs/triage
    """
    try:
        info = merge_runs(list(run_dirs), out)
    except MergeError as err:
        raise click.ClickException(str(err)) from None
    click.echo(f"{out}: {info.done} answered, {info.failed} failed, from {len(run_dirs)} runs")
