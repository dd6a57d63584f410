"""`spec run` and `spec merge`."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import click

from spec_audits.base import exits
from spec_audits.base.terminal import echo
from spec_audits.contract.reader import SUITE_FILE
from spec_audits.local.names import VERBOSE_ENV
from spec_audits.runner.batch.cli import batch_options, dry_run_lines, show_batches
from spec_audits.runner.execute import check_judges, run_suite
from spec_audits.runner.merge import MergeError, merge_runs
from spec_audits.runner.plan import Plan, Shard, estimate, index_suite
from spec_audits.runner.run_config import DEFAULT_MODEL, RunConfig, RunError
from spec_audits.runner.services.provider_errors import FatalError
from spec_audits.runner.study import record_study, slug, study_configs


def _shard(ctx: click.Context, param: click.Parameter, value: str | None) -> Shard | None:
    try:
        return Shard.parse(value) if value else None
    except ValueError as err:
        raise click.BadParameter(str(err)) from None


def _only(ctx: click.Context, param: click.Parameter, values: tuple[str, ...]) -> tuple[tuple[str, str], ...]:
    pairs = [value.split("=", 1) for value in values]
    bad = next((value for value, pair in zip(values, pairs, strict=True) if len(pair) != 2 or not pair[0]), None)
    if bad is not None:
        raise click.BadParameter(f"expected KEY=VALUE (a cell field and its value, e.g. condition=baseline), "
                                 f"got {bad!r}")
    return tuple((key, value) for key, value in pairs)


def _default_out(suite_dir: Path, name: str, shard: Shard | None) -> Path:
    suffix = f"-shard{shard.index}of{shard.count}" if shard else ""
    return Path("runs") / f"{suite_dir.resolve().name}-{name}{suffix}"


def _dry_run(config: RunConfig) -> None:
    suite, index = index_suite(config.suite_dir, config.shard, dict(config.only))
    mode = config.mode or suite.manifest.mode
    items = Plan.of(index, suite.path / SUITE_FILE, mode=mode, limit=config.limit, seed=config.seed)
    try:
        check_judges(suite, items, config.judge_model)
    except RunError as err:
        raise click.ClickException(str(err)) from None
    echo(f"{suite.manifest.suite}: {len(items)} answers to obtain ({mode} mode); nothing is called")
    estimates = estimate(items, mode=mode, model=config.model, judge_model=config.judge_model)
    for entry in estimates:
        cost = "unknown (not in litellm's cost map)" if entry.cost_usd is None else f"${entry.cost_usd:,.4f}"
        echo(
            f"  {entry.model}: {entry.calls} calls, ~{entry.prompt_tokens:,} prompt tokens, "
            f"<= {entry.completion_tokens:,} completion tokens, cost {cost}"
        )
        if len(entry.rounds) > 1:  # a conversation: how many of the calls each turn of a row makes
            echo("    calls per turn: " + ", ".join(f"{turn}: {n:,}" for turn, n in sorted(entry.rounds.items())))
    for line in dry_run_lines(estimates, config.batch_size) if config.batch else []:
        echo(line)


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
@click.option("--api-base", help="Base URL of an OpenAI-compatible server (e.g. http://127.0.0.1:8000/v1); "
              "no credentials in it: keys come from the environment.")
@click.option(
    "--out",
    type=click.Path(file_okay=False, path_type=Path),
    help="Run folder [default: runs/<suite>-<model>, or runs/<suite>-study for several models or reasoning "
    "settings]. Rerunning the same command resumes it.",
)
@click.option("--mode", type=click.Choice(["sample", "logprob"]), help="Override the suite's mode.")
@click.option("--limit", type=click.IntRange(min=1),
              help="Run a seeded subset of N rows stratified over cells; for a suite of units (conditional "
                   "bias) N whole units, each with all its rows.")
@click.option("--seed", default=0, show_default=True, help="Seed of the --limit subset.")
@click.option("--shard", callback=_shard, metavar="I/N", help="Run shard I of N (1-based, split by item id).")
@click.option("--concurrency", default=8, show_default=True, type=click.IntRange(min=1),
              help="Calls in flight at once, per model (the first uncached call goes alone).")
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
@click.option("--judge-model", help="litellm model that labels follow-up replies (over the suite's judge model).")
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
@click.option("--replicate", type=click.IntRange(min=1), metavar="N",
              help="Replicate N of the run: fresh answers that never come from another run's cached ones (new cache "
              "slots, and new seeds where seeds apply); the noise floor's baseline re-run (docs/scoring.md).")
@click.option("--only", multiple=True, callback=_only, metavar="KEY=VALUE",
              help="Run only the rows whose cell has this value (repeatable), e.g. --only condition=baseline.")
@click.option("--retry-failed", is_flag=True, help="Re-attempt items recorded as failed.")
@click.option("--dry-run", is_flag=True, help="Print calls, tokens and estimated cost per model; call nothing.")
@click.option("--progress/--no-progress", default=True,
              help="Show progress: a bar on a terminal, a line every tenth of the way otherwise.")
@click.option("--verbose", is_flag=True, help="Show llama.cpp's own log lines when the embedded model loads.")
@batch_options
def run(suite_dir: Path, out: Path | None, no_cache: bool, dry_run: bool, verbose: bool, models: tuple[str, ...],
        efforts: tuple[str, ...], batch_action: str | None, **options: Any) -> None:
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
      spec run generated/triage --model openai/gpt-4o-mini --replicate 1 --only condition=baseline \
          --out runs/triage-gpt-4o-mini-replicate     # the noise floor's baseline re-run
      spec run generated/triage --model openai/gpt-4o-mini --batch      # again, or with --status, later

    Exit status: 0 every item answered; 3 stopped at once (no key, refused
    key, unknown model, no server, the same error on item after item);
    4 finished with failed items (rerun with --retry-failed), or with not
    one readable reply; 1 and 2 as for every command (docs/running.md,
    "Exit status").
    """
    if verbose:
        os.environ[VERBOSE_ENV] = "1"
    runs: tuple[str | None, ...] = efforts or (None,)
    study = len(models) * len(runs) > 1
    out = out or _default_out(suite_dir, "study" if study else slug(models[0]), options["shard"])
    config = RunConfig(suite_dir=suite_dir, out=out, use_cache=not no_cache, model=models[0],
                       reasoning_effort=runs[0], **options)
    configs = study_configs(config, models, runs) if study else [config]
    if study and not dry_run and not batch_action:
        record_study(out, suite_dir, [c.out.name for c in configs])
    ended = [_run_one(each, dry_run, batch_action) for each in configs]
    failed, unreadable = sum(f for f, _ in ended), sum(u for _, u in ended)
    if failed:
        click.echo(f"spec run: {failed} item(s) failed; their reasons are in results.jsonl. Rerun the same command "
                   "with --retry-failed to ask them again", err=True)
    if failed or unreadable:
        click.get_current_context().exit(exits.PARTIAL)



def _run_one(config: RunConfig, dry_run: bool, action: str | None = None) -> tuple[int, int]:
    """Run (or estimate, or show or cancel the batches of) one run; the number of its items that failed, and
    1 when it answered items but not one reply could be read (nothing to score: not a success)."""
    try:
        if action:
            show_batches(config, action)
            return 0, 0
        if dry_run:
            _dry_run(config)
            return 0, 0
        summary = run_suite(config)
    except RunError as err:
        raise click.ClickException(str(err)) from None
    except FatalError as err:
        raise FatalError(f"run stopped: {err}. Answers so far are kept in {config.out}; once that is fixed, rerun "
                         "the same command to resume") from None
    resumed = f", {summary.resumed} from an earlier run" if summary.resumed else ""
    echo(
        f"{summary.run_dir}: {summary.done} answered, {summary.failed} failed of {summary.planned} "
        f"({summary.mode} mode{resumed}); {summary.calls} calls, {summary.cache_hits} cache hits"
    )
    echo(usage_line(summary.usage))
    unread = summary.unread
    if unread.count:
        echo(f"{summary.run_dir}: {unread.describe()}", err=unread.count == summary.done)
    if summary.done and unread.count == summary.done:
        echo(f"spec run: {summary.run_dir}: no reply of {summary.done} could be read, so nothing can be scored. "
             "Read the replies in results.jsonl: the answer form, the prompt's instructions or max_tokens may not "
             "fit this model", err=True)
        return summary.failed, 1
    return summary.failed, 0


def usage_line(usage: dict[str, Any]) -> str:
    """The run's tokens and estimated cost, as run.json records them."""
    cost = usage.get("cost_usd")
    price = "no price known to litellm" if cost is None else f"estimated cost ${cost:,.4f}"
    return (f"  tokens: {usage.get('prompt_tokens', 0):,} prompt + {usage.get('completion_tokens', 0):,} completion; "
            f"{price} (calls answered from the response cache cost nothing)")


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
    except (MergeError, RunError) as err:
        raise click.ClickException(str(err)) from None
    echo(f"{out}: {info.done} answered, {info.failed} failed, from {len(run_dirs)} runs")
