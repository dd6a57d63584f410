"""Batch mode's loop: pass -> submit -> poll -> collect, until every item is answered or failed.

A pass runs each pending item through the live runner's own code (spec_audits.runner.item_runner.Runner) with a
BatchClient: an item whose calls are all answered gives its result row exactly as a live run would, and is
written at once; any other stops at its first unanswered call, which goes into the next batch. So a
follow-up, a judge, a generated turn or a re-ask is sent in the round after the answer it builds on.
"""

from __future__ import annotations

from typing import Any

from spec_audits.runner.batch.client import BatchClient, Outcomes, Pending
from spec_audits.runner.batch.parts import Parts
from spec_audits.runner.batch.providers import batch_provider
from spec_audits.runner.call import CallSettings, ModelClient, Reply
from spec_audits.runner.item_runner import Runner, _Item
from spec_audits.runner.plan import WorkItem
from spec_audits.runner.results_io import ResultsWriter
from spec_audits.runner.run_config import RunConfig
from spec_audits.runner.services.cache import ResponseCache
from spec_audits.runner.services.provider_errors import FatalError


class BatchRunner(Runner):
    """The live runner, its calls answered by batches (see the module's docstring)."""

    def __init__(self, config: RunConfig, mode: str, cache: ResponseCache) -> None:
        self.outcomes = Outcomes()
        self.cache = cache
        super().__init__(config, mode, cache)

    def new_client(self, settings: CallSettings, **options: Any) -> ModelClient:
        batch_provider(settings.model)
        return BatchClient(settings, self.cache, outcomes=self.outcomes, **options)

    async def _logprob_call(self, item: _Item) -> tuple[dict[str, Any], Reply]:
        params, reply = await super()._logprob_call(item)
        if reply.top_logprobs is None:
            raise FatalError(f"{self.config.model} returned no logprobs in its batch output: run the suite with "
                             "--mode sample, or without --batch")
        return params, reply

    def clients(self) -> list[ModelClient]:
        return [self.client, *self.judges.values()]


def check_models(runner: BatchRunner, todo: list[WorkItem]) -> None:
    """Every model the items will call must take batches: checked before anything is sent."""
    for work in todo:
        for followup in work.row.followups or []:
            if followup.judge is not None:
                runner.judge_client(followup.judge)


async def run_pass(runner: BatchRunner, todo: list[WorkItem], writer: ResultsWriter, bar: Any) -> list[WorkItem]:
    """Write the rows of the items now answered in full; return the others, their next calls collected."""
    waiting = []
    for work in todo:
        hits = [client.hits for client in runner.clients()]
        try:
            row = await runner.process(work)
        except Pending:
            for client, count in zip(runner.clients(), hits, strict=False):  # counted when its row is written
                client.hits = count
            waiting.append(work)
            continue
        writer.append(row)
        bar.update()
    runner.shared.forget(Pending)
    return waiting


async def execute_batches(runner: BatchRunner, todo: list[WorkItem], writer: ResultsWriter, bar: Any) -> None:
    """Run `todo` in batch rounds (a FatalError stops it; rerunning the command resumes)."""
    check_models(runner, todo)
    parts = Parts(runner.config, runner.outcomes, runner.cache)
    try:
        while todo:
            todo = await run_pass(runner, todo, writer, bar)
            if todo:
                if not runner.outcomes.needed:  # every waiting item's next call is needed: else no round ends
                    raise AssertionError("a batch pass left items waiting on no request")
                await parts.resume(runner.outcomes.needed)  # the previous run's parts, once: checked first
                await parts.submit(runner.outcomes.needed)
                runner.outcomes.needed.clear()
                await parts.wait()
    finally:
        runner.client.calls += parts.submitted
