"""The client a batch pass runs the live runner with: it answers from the response cache, fails a call its
batch failed, and collects every other call as a line of the next batch instead of making it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from spec_audits.runner.batch.providers import request_body
from spec_audits.runner.batch.requests import request_line
from spec_audits.runner.call import ModelClient, Reply
from spec_audits.runner.services.provider_errors import CallFailed


class Pending(Exception):  # noqa: N818 - a signal, not an error: the item waits for the next round
    """The call is not answered yet: the item stops here for this pass."""


@dataclass
class Outcomes:
    """What a run's batches gave: the keys they answered (so not cache hits), the requests that failed, and
    the requests this pass still needs (key -> (model, batch line))."""

    answered: set[str] = field(default_factory=set)
    errors: dict[str, str] = field(default_factory=dict)
    needed: dict[str, tuple[str, bytes]] = field(default_factory=dict)


@dataclass
class BatchClient(ModelClient):
    """A ModelClient that never calls the model (see the module's docstring)."""

    outcomes: Outcomes = field(default_factory=Outcomes)

    async def call(
        self, messages: list[dict[str, Any]], params: dict[str, Any], slot: str, extras: dict[str, Any]
    ) -> Reply:
        key = self.key(messages, params, slot, extras)
        found = self.cache.get(key)
        if found is not None:
            fresh = key in self.outcomes.answered
            self.hits += not fresh
            return Reply(found["text"], found["usage"], found["top_logprobs"], cached=not fresh, latency_s=0.0)
        error = self.outcomes.errors.get(key)
        if error is not None:
            raise CallFailed(error)
        if key not in self.outcomes.needed:
            body = request_body(self.settings.model, messages, {**params, **extras})
            self.outcomes.needed[key] = (self.settings.model, request_line(key, body))
        raise Pending
