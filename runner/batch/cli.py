"""`spec run`'s batch options, and what --status, --cancel and --dry-run say about a run's batches."""

from __future__ import annotations

import asyncio
import math
from collections.abc import Callable
from typing import Any

import click

from spec_audits.base.terminal import echo
from spec_audits.runner.plan import Estimate
from spec_audits.runner.run_config import RunConfig, RunError, check_api_base

_OPTIONS = (
    click.option("--batch", is_flag=True,
                 help="Send the calls through the provider's batch API (OpenAI: half price, answers within 24 h), "
                      "a round per turn; rerunning the command resumes the same batches."),
    click.option("--batch-size", type=click.IntRange(min=1),
                 help="Requests per batch file [default: the provider's limit, 50,000 for OpenAI]."),
    click.option("--poll", "poll_s", default=60.0, show_default=True, type=click.FloatRange(min=0, min_open=True),
                 help="Seconds between two looks at the open batches."),
    click.option("--status", "batch_action", flag_value="status",
                 help="Show the run's batches (state and counts, asked of the provider) and exit."),
    click.option("--cancel", "batch_action", flag_value="cancel",
                 help="Cancel the run's open batches and exit; rerun with --batch to collect what they finished."),
)


def batch_options(command: Callable[..., Any]) -> Callable[..., Any]:
    for option in reversed(_OPTIONS):
        command = option(command)
    return command


def show_batches(config: RunConfig, action: str) -> None:
    """--status or --cancel: neither writes to the run folder (a run polling it may be going on)."""
    from spec_audits.contract.reader import find_run_info
    from spec_audits.runner.batch.ledger import read_ledger

    check_api_base(config.api_base)
    parts = read_ledger(config.out).parts
    if not parts:
        raise RunError(f"{config.out} has no batches (it was not run with --batch)")
    info = find_run_info(config.out)
    if info is not None and info.model != config.model:  # its batches are asked of that model's provider
        raise RunError(f"{config.out} is a run of {info.model}: give the run's own --model (and --api-base)")
    models = run_models(config)
    stranger = next((part for part in parts if part.model not in models), None)
    if stranger is not None:  # its batches would be asked of that model's provider, with that provider's key
        raise RunError(f"{config.out}/batches/ledger.json: batch {stranger.name} names {stranger.model}, which this "
                       f"run does not call ({', '.join(sorted(models))}); spec asks no provider about it")
    lines = asyncio.run(_cancel(config, parts) if action == "cancel" else _status(config, parts))
    for line in lines:
        echo(line)


def run_models(config: RunConfig) -> set[str]:
    """The models a run of `config` calls: its own, and the judges and turn writers its suite names."""
    from spec_audits.contract.reader import read_suite

    models = {config.model}
    for row in read_suite(config.suite_dir).rows:
        models.update(message.model for message in row.messages if message.model)
        judges = (followup.judge for followup in row.followups or [] if followup.judge is not None)
        models.update(name for judge in judges if (name := config.judge_model or judge.model))
    return models


async def _status(config: RunConfig, parts: list[Any]) -> list[str]:
    from spec_audits.runner.batch.parts import batch_api, describe, update

    for part in parts:
        if not part.collected and part.batch_id is not None and not part.final:
            update(part, await batch_api(config, part.model).retrieve(part.batch_id))
    collected = sum(part.collected for part in parts)
    rounds = len({part.round for part in parts})
    head = f"{config.out}: {_count(len(parts), 'batch')} in {_count(rounds, 'round')}, {collected} collected"
    return [head, *(f"  {describe(part)}{', collected' if part.collected else ''}" for part in parts)]


async def _cancel(config: RunConfig, parts: list[Any]) -> list[str]:
    from spec_audits.runner.batch.parts import batch_api, describe, update

    lines = []
    for part in parts:
        if not part.collected and part.batch_id is not None and not part.final:
            update(part, await batch_api(config, part.model).cancel(part.batch_id))
            lines.append(f"cancelled {describe(part)}")
    return lines or [f"{config.out}: no open batch to cancel"]


def dry_run_lines(estimates: list[Estimate], batch_size: int | None) -> list[str]:
    """Batch files and price at the batch rate per model: a file per round (a turn of an item's chain of
    calls) and per provider limit; re-asks not included."""
    from spec_audits.runner.batch.providers import batch_provider

    lines = []
    for entry in estimates:
        provider = batch_provider(entry.model)
        limit = min(provider.max_requests, batch_size or provider.max_requests)
        line_bytes = 4 * entry.prompt_tokens / max(entry.calls, 1) + 300  # the body around the prompt
        files = sum(max(math.ceil(n / limit), math.ceil(n * line_bytes / provider.max_bytes))
                    for n in entry.rounds.values())
        cost = batch_cost(entry)
        price = "unknown (not in litellm's cost map)" if cost is None else f"${cost:,.4f}"
        rounds = _count(len(entry.rounds), "round")
        lines.append(f"  {entry.model} in batches: {_count(files, 'batch file')} in {rounds} (<= {limit:,} requests "
                     f"each), cost at the batch rate {price}")
    return lines


def _count(n: int, noun: str) -> str:
    return f"{n:,} {noun}{'' if n == 1 else 'es' if noun.endswith('ch') else 's'}"


def batch_cost(entry: Estimate) -> float | None:
    """The estimate's price at the provider's batch rate (litellm's map; half the live rate where it has none)."""
    if entry.cost_usd is None:
        return None
    import litellm
    from litellm.cost_calculator import batch_cost_calculator

    usage = litellm.Usage(prompt_tokens=entry.prompt_tokens, completion_tokens=entry.completion_tokens,
                          total_tokens=entry.prompt_tokens + entry.completion_tokens)
    prompt, completion = batch_cost_calculator(usage, entry.model)
    return prompt + completion
