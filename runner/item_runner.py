"""One work item through its calls: prompt, answer, extraction, judge and follow-ups, from the cache or the model."""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from spec_audits.contract.results_model import ResultRow
from spec_audits.contract.suite_model import EXTRACTION_SLOT, FollowUp, Judge, Message, SuiteRow, TurnAnswer
from spec_audits.contract.suite_terms import FOLLOWUP_SLOTS, JUDGE_SLOTS, DecodeSettings
from spec_audits.local.names import is_local
from spec_audits.puzzles.answers import outcome_of, read_solution
from spec_audits.runner.answers import (
    EXTRACTION_FORMS,
    EXTRACTION_PARSERS,
    parse_answer,
    parse_judge_json,
    read_fields,
)
from spec_audits.runner.call import CallSettings, ModelClient, Reply
from spec_audits.runner.conversation import ConversationStopped, answered_turn, fill_turn, read_answer
from spec_audits.runner.plan import JUDGE_MAX_TOKENS, WorkItem
from spec_audits.runner.run_config import RunConfig
from spec_audits.runner.services.cache import NoCache, ResponseCache
from spec_audits.runner.services.provider_errors import CallFailed
from spec_audits.runner.shared_turns import SharedTurns
from spec_audits.runner.turn_journal import TurnJournal

TOP_LOGPROBS = 20
# Seeds of successive re-asks of one sample are this far apart, so they never meet another sample's seed;
# a replicate run's seeds are further apart still, so they never meet the original's.
_RESEED = 1_000_003
_REPLICATE = 1_000_000_007
ANSWER_LINE = "answer_line"  # a row's decode setting that says how its answer is read, never sent to the model
_SLOT = re.compile(r"\{\{\s*(\w+)\s*\}\}")  # a name the compiler left for the runner to fill in


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def answer_probabilities(top: list[dict[str, Any]], tokens: list[str]) -> dict[str, float] | None:
    """Probabilities of the valid tokens, normalised over the valid set (None if none was seen)."""
    mass = dict.fromkeys(tokens, 0.0)
    for entry in top:
        token = entry["token"].strip()
        if token in mass:
            mass[token] += math.exp(entry["logprob"])
    total = sum(mass.values())
    return {t: m / total for t, m in mass.items()} if total > 0 else None


def fill_slots(text: str, values: dict[str, str]) -> str:
    """`text` with each `{{ name }}` of `values` replaced, in one pass (a value is never read for names)."""
    return _SLOT.sub(lambda m: values.get(m.group(1), m.group(0)), text)


def judge_prompt(judge: Judge, reply: str, conversation: list[dict[str, Any]]) -> str:
    """The judge's prompt with the reply and the conversation before it (JUDGE_SLOTS) filled in."""
    shown = "\n\n".join(f"{m['role'].capitalize()}: {m.get('content') or ''}" for m in conversation)
    return fill_slots(judge.prompt, dict(zip(JUDGE_SLOTS, (reply, shown), strict=True)))


@dataclass
class _Item:
    """The state of one (item, sample) while its calls are made."""

    work: WorkItem
    messages: list[dict[str, Any]] = field(default_factory=list)
    usage: Counter[str] = field(default_factory=Counter)
    latency_s: float = 0.0
    replies: int = 0
    hits: int = 0
    turns: list[dict[str, Any]] = field(default_factory=list)
    answered: dict[str, tuple[TurnAnswer, dict[str, Any]]] = field(default_factory=dict)

    def take(self, reply: Reply) -> Reply:
        self.usage.update(reply.usage)
        self.latency_s += reply.latency_s
        self.replies += 1
        self.hits += reply.cached
        return reply

    def cached(self, error: str | None) -> bool:
        """True only when every reply came from the response cache and the item was answered."""
        return error is None and 0 < self.replies == self.hits


class Runner:
    """Turns work items into ResultRows; one instance per run."""

    def __init__(self, config: RunConfig, mode: str, cache: ResponseCache | NoCache) -> None:
        self.config = config
        self.mode = mode
        self._cache = cache
        self.client = self.new_client(self._call_settings(config.model, config.api_base),
                                      slot_prefix=f"replicate{config.replicate}/" if config.replicate else "")
        judge = config.judge_model
        self.judges: dict[str, ModelClient] = {}
        self.shared = SharedTurns()
        self.journal: TurnJournal | None = None  # the run folder's turns, set by the run
        if judge:
            self.judges[judge] = self.new_client(self._judge_settings(judge))

    def new_client(self, settings: CallSettings, **options: Any) -> ModelClient:
        return ModelClient(settings, self._cache, **options)

    def watch_retries(self, show: Callable[[str | None], None]) -> None:
        """Let `show` see the reason of each retry (None once calls succeed again), for the progress line."""
        for client in (self.client, *self.judges.values()):
            client.on_retry = show

    def _call_settings(self, model: str, api_base: str | None) -> CallSettings:
        c = self.config
        return CallSettings(model, api_base, c.timeout_s, c.max_retries, c.retry_base_s, rpm=c.rpm, tpm=c.tpm)

    def turn_client(self, model: str | None) -> ModelClient:
        """The client of a generated turn: the audited model's, or the named model's (`Message.model`)."""
        if model is None or model == self.config.model:
            return self.client
        if model not in self.judges:
            self.judges[model] = self.new_client(self._judge_settings(model), on_retry=self.client.on_retry)
        return self.judges[model]

    def _judge_settings(self, model: str) -> CallSettings:
        """--api-base is the run model's: a judge gets it only when it is that model (as a batch run sends it),
        any other judge goes to its provider's own endpoint."""
        return self._call_settings(model, self.config.api_base if model == self.config.model else None)

    def judge_client(self, judge: Judge) -> ModelClient | None:
        name = self.config.judge_model or judge.model  # the command line over the suite
        if name and name not in self.judges:
            self.judges[name] = self.new_client(self._judge_settings(name), on_retry=self.client.on_retry)
        return self.judges.get(name) if name else None

    def decode(self, row: SuiteRow, sample: int, attempt: int, model: str,
               turn: DecodeSettings | None = None) -> dict[str, Any]:
        """The decode settings sent: the row's (a generated turn's own over them), CLI overrides, and a
        per-sample seed where seeds apply."""
        params: dict[str, Any] = {key: value for key, value in {**row.decode, **(turn or {})}.items()
                                  if key != ANSWER_LINE}
        if self.config.max_tokens is not None:
            params["max_tokens"] = self.config.max_tokens
        if self.config.reasoning_effort is not None:
            params["reasoning_effort"] = self.config.reasoning_effort
        if "seed" in params or is_local(model):
            params["seed"] = int(params.get("seed") or 0) + sample + _RESEED * attempt + \
                _REPLICATE * (self.config.replicate or 0)
        return params

    def choice_extras(self, tokens: list[str], model: str, row: SuiteRow | None = None) -> dict[str, Any]:
        """The local base model is held to the valid tokens for a forced-choice answer, but not where the row
        asks for reasoning that ends in an answer line."""
        free = row is not None and ANSWER_LINE in row.decode
        return {"answer_tokens": tokens, "forced_choice": True} if is_local(model) and not free else {}

    async def process(self, work: WorkItem) -> ResultRow:
        item = _Item(work)
        row = work.row
        params = self.decode(row, work.sample, 0, self.config.model)
        result: dict[str, Any] = {}
        try:
            await self._prefix(item)
            if self.mode == "logprob":
                params, result = await self._score(item)
            else:
                params, result = await self._sample(item)
            if row.followups:
                result["followups"] = await self._followups(item, result, row.followups)
            error = None
        except ConversationStopped as stop:
            error, result = None, {"stopped": str(stop)}
        except CallFailed as err:
            error = str(err) or "failed"
        if item.answered:
            result["turn_answers"] = {name: turn for name, (_, turn) in item.answered.items()}
        return ResultRow(
            item_id=row.id,
            sample=work.sample,
            model=self.config.model,
            params=params,
            error=error,
            usage=dict(item.usage) or None,
            latency_s=round(item.latency_s, 4),
            turns=item.turns or None,
            cached=item.cached(error),
            **result,
        )

    async def _prefix(self, item: _Item) -> None:
        """Fill the conversation up to the answer, generating assistant turns in order (a turn the run's journal
        holds is taken from it), parsing answered turns and filling user turns from their answers."""
        work = item.work
        messages = work.row.messages
        if messages[-1].generate:
            messages = messages[:-1]  # a trailing generate turn is the answer itself
        for index, message in enumerate(messages):
            if not message.generate:
                content = message.content or ""
                item.messages.append({"role": message.role,
                                      "content": fill_turn(content, item.answered, index) if message.fill else content})
                continue
            reply = item.take(await self._turn(item, index, message))
            item.messages.append({"role": "assistant", "content": reply.text or ""})
            item.turns.append({"turn": index, "content": reply.text})
            if message.answer is not None:
                line = {**work.row.decode, **(message.decode or {})}.get(ANSWER_LINE)
                turn = answered_turn(message.answer, index, reply.text, None if line is None else str(line))
                item.answered[message.answer.name] = (message.answer, turn)

    async def _turn(self, item: _Item, index: int, message: Message) -> Reply:
        """A generated turn: from the journal, else the shared turn or a call, then journalled."""
        work = item.work
        key = (work.row.id, work.sample, index)
        found, text = self.journal.get(key) if self.journal is not None else (False, None)
        if found:
            return Reply(text, {}, None, True, 0.0)
        client = self.turn_client(message.model)
        params = self.decode(work.row, work.sample, 0, client.settings.model, message.decode)
        # a shared turn's cache slot is its share key: turns with the same text but their own keys (the
        # authors' acknowledgment, one per arm) stay separate calls, with or without the cache
        slot = f"{work.sample}/turn{index}" if message.share is None else f"{work.sample}/{message.share}"
        extras = {}
        if message.answer is not None:
            extras = self.choice_extras(list(message.answer.answers), client.settings.model, work.row)

        def call() -> Awaitable[Reply]:
            return client.call(item.messages, params, slot, extras)

        share = message.share
        reply = await (call() if share is None else self.shared.get((share, work.sample), call, work.key))
        if self.journal is not None:
            self.journal.add(key, share, reply.text)
        return reply

    async def _sample(self, item: _Item) -> tuple[dict[str, Any], dict[str, Any]]:
        """Draw the answer; re-ask an invalid one up to `reasks` times."""
        work = item.work
        tokens = tuple(work.row.answers)
        first: str | None = None
        extracted: dict[str, Any] = {}
        for attempt in range(self.config.reasks + 1):
            params = self.decode(work.row, work.sample, attempt, self.config.model)
            free = work.row.extract is not None or work.row.answer_form is not None
            extras = {} if free else self.choice_extras(list(tokens), self.config.model, work.row)
            slot = f"{work.sample}/answer{attempt}"
            reply = item.take(await self.client.call(item.messages, params, slot, extras))
            if work.row.extract is None:
                answer, extracted = self._parsed(reply.text, tokens, work.row)
            else:
                answer, extracted = await self._extract(item, reply.text or "", params, attempt)
            if attempt == 0:
                first = answer
            if answer is not None:
                break
        outcome = work.row.answers.get(answer) if answer else None
        if work.row.read:
            extracted["recorded"] = read_fields(reply.text, work.row.read)
        result = {
            "response": reply.text,
            "answer": answer,
            "outcome": outcome,
            "reasks": attempt,
            "first_answer": first,
            **extracted,
        }
        return params, result

    @staticmethod
    def _parsed(text: str | None, tokens: tuple[str, ...], row: SuiteRow) -> tuple[str | None, dict[str, Any]]:
        """The reply's answer: a puzzle's solution read and judged where the row is answered by one; else from
        its last line where the row says so (`answer_line`), else the reply itself."""
        if row.answer_form == "solution":
            read = read_solution(text, row.puzzle or {})
            return outcome_of(read, (row.expect or {})["solution"]), {"solution": read or None}
        prefix = row.decode.get(ANSWER_LINE)
        return read_answer(text, tokens, None if prefix is None else str(prefix)), {}

    async def _extract(self, item: _Item, decision: str, params: dict[str, Any],
                       attempt: int) -> tuple[str | None, dict[str, Any]]:
        """The authors' second call (seed 004): a single-turn prompt holding the options and the free
        decision, with the decision's settings and no token cap; its reply read by the row's parser."""
        work = item.work
        extract = work.row.extract
        assert extract is not None
        tokens = tuple(work.row.answers)
        messages = [{"role": "user", "content": extract.prompt.replace(EXTRACTION_SLOT, decision, 1)}]
        free = {key: value for key, value in params.items() if key != "max_tokens"}
        forms = [EXTRACTION_FORMS[extract.parse].format(token) for token in tokens]
        extras = self.choice_extras(forms, self.config.model)
        slot = f"{work.sample}/extract{attempt}/{work.row.id}"  # its own call even where two rows' prompts agree
        reply = item.take(await self.client.call(messages, free, slot, extras))
        return EXTRACTION_PARSERS[extract.parse](reply.text, tokens), {"extraction": reply.text}

    async def _logprob_call(self, item: _Item) -> tuple[dict[str, Any], Reply]:
        work = item.work
        params = {
            **self.decode(work.row, 0, 0, self.config.model),
            "max_tokens": 1,
            "logprobs": True,
            "top_logprobs": TOP_LOGPROBS,
        }
        extras = {"answer_tokens": list(work.row.answers)} if is_local(self.config.model) else {}
        return params, item.take(await self.client.call(item.messages, params, "logprob", extras))

    async def _score(self, item: _Item) -> tuple[dict[str, Any], dict[str, Any]]:
        """One call giving the valid tokens' probabilities; the expected rate stands in for K samples."""
        params, reply = await self._logprob_call(item)
        answers = item.work.row.answers
        probs = answer_probabilities(reply.top_logprobs or [], list(answers))
        if probs is None:
            raise CallFailed(f"no valid answer token among the top {TOP_LOGPROBS} logprobs")
        answer = max(probs, key=probs.__getitem__)
        result = {
            "response": reply.text,
            "answer": answer,
            "outcome": answers[answer],
            "logprobs": probs,
            "first_answer": answer,
        }
        return params, result

    async def _followups(self, item: _Item, first: dict[str, Any], followups: list[FollowUp]) -> dict[str, Any]:
        """Each follow-up turn, its `{{ answer }}` the first reply's answer token (its text when it gave none),
        and its judge's verdict."""
        work = item.work
        answer_text = first.get("response") or ""
        item.messages.append({"role": "assistant", "content": answer_text})
        filled = dict(zip(FOLLOWUP_SLOTS, (first.get("answer") or answer_text,), strict=True))
        replies: dict[str, Any] = {}
        for followup in followups:
            item.messages.append({"role": "user", "content": fill_slots(followup.content, filled)})
            params = self.decode(work.row, work.sample, 0, self.config.model, followup.decode)
            slot = f"{work.sample}/followup:{followup.name}"
            reply = item.take(await self.client.call(item.messages, params, slot, {}))
            item.messages.append({"role": "assistant", "content": reply.text or ""})
            verdict = await self._judge(item, followup, reply.text or "") if followup.judge else {"label": None}
            replies[followup.name] = {"response": reply.text, **verdict}
        return replies

    async def _judge(self, item: _Item, followup: FollowUp, reply_text: str) -> dict[str, Any]:
        """The judge's label (None when its reply gives no valid one) and its raw reply; a JSON judge's
        reason too."""
        judge = followup.judge
        assert judge is not None
        client = self.judge_client(judge)
        if client is None:
            return {"label": None}
        labels = tuple(judge.labels)
        messages = [{"role": "user", "content": judge_prompt(judge, reply_text, item.messages)}]
        params = {"temperature": 0.0, "max_tokens": JUDGE_MAX_TOKENS[judge.reply]}
        extras = self.choice_extras(list(labels), client.settings.model) if judge.reply is None else {}
        slot = f"{item.work.sample}/judge:{followup.name}"
        reply = item.take(await client.call(messages, params, slot, extras))
        if judge.reply is None:
            return {"label": parse_answer(reply.text, labels), "judge_response": reply.text}
        label, reason = parse_judge_json(reply.text, labels)
        return {"label": label, "reason": reason, "judge_response": reply.text}

    async def supports_logprobs(self, work: WorkItem) -> bool:
        """Probe with one real (cached) call whether the model returns log-probabilities."""
        probe = _Item(work)
        try:
            await self._prefix(probe)
            _, reply = await self._logprob_call(probe)
        except CallFailed:
            return False
        return reply.top_logprobs is not None
