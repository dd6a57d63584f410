"""Run a suite: plan -> resume state -> concurrent cached calls -> results.jsonl and run.json."""

from __future__ import annotations

import asyncio
import sys
from collections import Counter
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import numpy as np

from spec_audits.contract.reader import (
    RESULTS_FILE,
    RUN_FILE,
    SUITE_FILE,
    SuiteHead,
    check_run_matches_suite,
    find_run_info,
    iter_results,
)
from spec_audits.contract.results_model import RunInfo
from spec_audits.local.names import is_local
from spec_audits.runner.cache_writes import BatchedCache
from spec_audits.runner.failures import RepeatBreaker
from spec_audits.runner.item_runner import Runner, now_iso
from spec_audits.runner.plan import Plan, WorkItem, cost_usd, index_suite, prefix_order
from spec_audits.runner.progress import progress
from spec_audits.runner.results_io import ResultsWriter, final_counts, prepare_resume, write_run_info
from spec_audits.runner.run_config import DEFAULT_MODEL, RunConfig, RunError, RunSummary, check_api_base
from spec_audits.runner.run_lock import locked
from spec_audits.runner.services.cache import NoCache, ResponseCache, default_cache_path
from spec_audits.runner.services.provider_errors import FatalError
from spec_audits.runner.shared_turns import written_turns
from spec_audits.runner.suite_index import RowIndex
from spec_audits.runner.turn_journal import TurnJournal
from spec_audits.runner.unread import Unread


def _check_out_dir(config: RunConfig, suite: SuiteHead, requested_mode: str) -> RunInfo | None:
    """An output folder may only be resumed by the same suite, model and mode; answers that no run.json
    ties to a suite and model are never adopted."""
    info = find_run_info(config.out)
    if info is None:
        if (config.out / RESULTS_FILE).is_file() and (config.out / RESULTS_FILE).stat().st_size:
            raise RunError(f"{config.out} holds {RESULTS_FILE} but no {RUN_FILE}, so nothing says which suite and "
                           f"model its answers are of: restore {RUN_FILE}, or use another --out")
        return None
    check_run_matches_suite(config.out, info, suite)
    if (info.model, info.settings.get("mode"), info.settings.get("replicate")) != \
            (config.model, requested_mode, config.replicate):
        raise RunError(
            f"{config.out} holds a run of {info.suite_dir} with {info.model} ({info.mode}); "
            "use another --out to start a new run"
        )
    return info


async def _execute(runner: Runner, todo: Plan | list[WorkItem], writer: ResultsWriter, bar: Any) -> None:
    """Run `todo` with `concurrency` workers; a FatalError cancels every worker and propagates."""
    pending = iter(todo)
    failed = 0
    shown: tuple[int, int] | None = None
    breaker = RepeatBreaker(runner.config.model)

    async def worker() -> None:
        nonlocal failed, shown
        for work in pending:
            row = await runner.process(work)
            for ready in breaker.take(row):
                writer.append(ready)
            failed += row.error is not None
            if shown != (runner.client.hits, failed):  # tqdm formats the postfix anew on every call
                shown = (runner.client.hits, failed)
                bar.set_postfix(hits=shown[0], failed=failed, refresh=False)
            bar.update()

    runner.watch_retries(lambda why: bar.set_description_str(f"retrying: {why}" if why else "", refresh=True))
    try:
        async with asyncio.TaskGroup() as group:
            for _ in range(min(runner.config.concurrency, len(todo))):
                group.create_task(worker())
    except* FatalError as errors:
        raise errors.exceptions[0] from None
    for ready in breaker.release():
        writer.append(ready)


def _open_cache(config: RunConfig) -> ResponseCache | NoCache:
    if config.batch and not config.use_cache:  # batch answers wait in the run folder until their rows are written
        from spec_audits.runner.batch.ledger import fresh_private_cache

        return BatchedCache(fresh_private_cache(config.out))
    return BatchedCache(config.cache_path or default_cache_path()) if config.use_cache else NoCache()


def _stage(config: RunConfig) -> tuple[type[Runner], Callable[..., Awaitable[None]]]:
    """Live calls, or batch rounds (runner/batch/); a live run never goes beside batches still open."""
    if config.batch:
        from spec_audits.runner.batch.providers import batch_provider
        from spec_audits.runner.batch.rounds import BatchRunner, execute_batches

        for model in filter(None, (config.model, config.judge_model)):
            batch_provider(model)
        return BatchRunner, execute_batches
    from spec_audits.runner.batch.ledger import refuse_live_run

    refuse_live_run(config.out)
    return Runner, _execute


EMBEDDED_NOTE = (f"model: {DEFAULT_MODEL}, the embedded offline base model (gemma-3 270M, 4-bit, run on this CPU): "
                 "it shows that the audit runs end to end; its answers are no finding about any deployed model. "
                 "Audit a model with --model PROVIDER/MODEL (e.g. openai/gpt-4o-mini).")


def _warn(message: str) -> None:
    print(f"spec run: {message}", file=sys.stderr)


def _plan(index: RowIndex, suite: SuiteHead, config: RunConfig, mode: str) -> Plan:
    return Plan.of(index, suite.path / SUITE_FILE, mode=mode, limit=config.limit, seed=config.seed)


async def _run(config: RunConfig) -> RunSummary:
    check_api_base(config.api_base)
    suite, index = index_suite(config.suite_dir, config.shard, dict(config.only))  # hashed and checked as it streams
    requested = config.mode or suite.manifest.mode
    if requested == "logprob" and index.answer_line:
        raise RunError("logprob mode reads the answer's first token, but this suite's rows answer on the last line "
                       "of a reasoned reply (decode answer_line): run it in sample mode")
    if requested == "logprob" and index.answer_form:
        raise RunError("logprob mode reads the answer's first token, but this suite's rows are answered by a puzzle's "
                       "solution, written out in full: run it in sample mode")
    items = _plan(index, suite, config, requested)
    check_judges(suite, items, config.judge_model)
    if config.only and not len(items):  # before the folder is made: a refused run leaves nothing behind
        raise RunError(f"--only {' '.join(f'{k}={v}' for k, v in config.only)} keeps no row of {config.suite_dir}")
    stage = _stage(config)  # also before the folder is made: a model without batches leaves nothing behind
    if config.model == DEFAULT_MODEL and not config.batch:  # said once the suite is known to be sound
        print(EMBEDDED_NOTE, file=sys.stderr)
    with locked(config.out, "spec run"):
        return await _run_locked(config, suite, requested, items, stage)


async def _run_locked(config: RunConfig, suite: SuiteHead, requested: str, items: Plan,
                      stage: tuple[type[Runner], Callable[..., Awaitable[None]]]) -> RunSummary:
    previous = _check_out_dir(config, suite, requested)
    runner_class, execute = stage
    cache = _open_cache(config)
    runner = runner_class(config, requested, cache)
    notes: list[str] = []
    results_path = config.out / RESULTS_FILE
    state = prepare_resume(results_path, model=config.model, retry_failed=config.retry_failed)
    if requested == "logprob" and len(items) and not config.batch and \
            not await runner.supports_logprobs(next(iter(items))):
        notes.append(f"{config.model} returns no logprobs: sampling instead")
        _warn(notes[-1])
        runner.mode = "sample"
        items = _plan(items.index, suite, config, "sample")
    todo = items.without(state.keys)
    runner.journal = TurnJournal(config.out)
    made = written_turns(iter_results(results_path), items.row_of) if items.index.shares else {}
    runner.shared.seed(made, runner.journal.shared)
    info = RunInfo(
        suite_dir=str(suite.path),
        suite_manifest_sha256=suite.manifest_sha256,
        suite_sha256=suite.sha256,
        model=config.model,
        mode=runner.mode,
        settings={**config.settings(), "mode": requested},
        notes=notes,
        started=previous.started if previous else now_iso(),
        planned=len(items),
        done=0,
        failed=0,
    )
    write_run_info(config.out, info)
    writer = ResultsWriter(results_path)
    bar = progress(len(items), len(items) - len(todo), config.progress)
    try:
        await execute(runner, _in_order(config, todo), writer, bar)
    finally:
        bar.close()
        writer.close()
        runner.journal.close()
        cache.close()
        found = _record_counts(config.out, info, np.sort(items.keys()))
    calls = runner.client.calls + sum(j.calls for j in runner.judges.values())
    return RunSummary(config.out, runner.mode, len(items), info.done, info.failed, len(items) - len(todo), calls,
                      runner.client.hits, notes, usage=info.usage or {}, unread=found)


def _in_order(config: RunConfig, todo: Plan) -> Plan | list[WorkItem]:
    """The items as a live run takes them, read from the suite as they go; in memory where the order is the
    embedded model's (answers do not depend on the order; the speed does) or for batch rounds."""
    if is_local(config.model):
        return prefix_order(list(todo))
    return list(todo) if config.batch else todo


def _record_counts(out: Path, info: RunInfo, planned: np.ndarray) -> Unread:
    """run.json's done/failed counts from what results.jsonl holds for the planned items (`planned`: their sorted
    keys), its tokens and their estimated cost, and the end time; returns the successful replies that gave no
    valid answer."""
    counts = final_counts(out / RESULTS_FILE, planned)
    info.done, info.failed = counts.done, counts.failed
    info.usage = _usage(info.model, counts.tokens)
    info.ended = now_iso()
    write_run_info(out, info)
    return counts.unread


def check_judges(suite: SuiteHead, items: Plan, judge_model: str | None) -> None:
    """Refuse, before any call, a follow-up whose judge has no model when the run names none either: its
    labels would all be null (what to write instead is in the message). The first such row of the suite is named."""
    if judge_model:
        return
    row = items.first_unjudged()
    if row is not None:
        name = next(f.name for f in row.followups or [] if f.judge and not f.judge.model)
        raise RunError(f"{suite.path / SUITE_FILE}, row {row.id}: follow-up '{name}' has a judge with no model, so "
                       "every label would be null. Give the run one with --judge-model provider/model, or write "
                       f"model \"provider/model\" in the judge clause of followup {name} and compile again")


def _usage(model: str, tokens: Counter[str]) -> dict[str, Any]:
    """Tokens of the rows' calls, and the price of those not answered from the response cache (`fresh_...`)."""
    paid = cost_usd(model, tokens["fresh_prompt_tokens"], tokens["fresh_completion_tokens"])
    return {"prompt_tokens": tokens["prompt_tokens"], "completion_tokens": tokens["completion_tokens"],
            "cost_usd": None if paid is None else round(paid, 6)}


def run_suite(config: RunConfig) -> RunSummary:
    """Run (or resume) a suite as `config` says; raises ContractError, RunError or FatalError."""
    return asyncio.run(_run(config))
