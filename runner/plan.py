"""Work items of a run: every (row, sample), or a seeded subset stratified over cells, or one shard."""

from __future__ import annotations

import hashlib
import random
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from spec_audits.contract.seeding import canonical_json as canonical
from spec_audits.contract.suite_model import DecodeSettings, Judge, SuiteRow

# The judge's max_tokens by its reply format: a bare label fits in 16; JSON carries a one-sentence reason too.
JUDGE_MAX_TOKENS: dict[str | None, int] = {None: 16, "json": 256}
# An extraction reply is one option ("Option 7"); it is sent uncapped, so this bound is the estimate's.
EXTRACTION_MAX_TOKENS = 16


@dataclass(frozen=True)
class WorkItem:
    """One answer to obtain: sample `sample` of suite row `row`."""

    row: SuiteRow
    sample: int

    @property
    def key(self) -> tuple[str, int]:
        return (self.row.id, self.sample)


@dataclass(frozen=True)
class Shard:
    """Shard `index` (1-based) of `count`: a deterministic split of the suite by item id."""

    index: int
    count: int

    @classmethod
    def parse(cls, text: str) -> Shard:
        try:
            i, n = (int(part) for part in text.split("/"))
        except ValueError:
            raise ValueError(f"--shard must look like i/n (e.g. 1/4), got {text!r}") from None
        if not 1 <= i <= n:
            raise ValueError(f"--shard {text}: need 1 <= i <= n")
        return cls(i, n)

    def owns(self, item_id: str) -> bool:
        digest = hashlib.sha256(item_id.encode()).digest()
        return int.from_bytes(digest[:8], "big") % self.count == self.index - 1


def stratified_subset(
    rows: list[SuiteRow], limit: int, seed: int, strata: Sequence[str] | None = None
) -> list[SuiteRow]:
    """`limit` rows spread evenly over strata: strata visited round-robin in a seeded order,
    rows within a stratum in a seeded order; returned in suite order.

    A stratum is the row's whole cell, or only the cell keys in `strata` (a suite's balance keys,
    e.g. factor x influence x condition, so that every condition of the design gets answers)."""
    by_cell: dict[str, list[SuiteRow]] = defaultdict(list)
    for row in rows:
        cell = row.cell if strata is None else {key: row.cell.get(key) for key in strata}
        by_cell[canonical(cell)].append(row)
    rng = random.Random(seed)
    queues = [by_cell[key] for key in sorted(by_cell)]
    rng.shuffle(queues)
    for queue in queues:
        rng.shuffle(queue)
    if strata is not None and len(strata) > 1:
        queues = _marginally_balanced(queues, strata, limit)
    picked: set[str] = set()
    depth = 0
    while len(picked) < min(limit, len(rows)):
        for queue in queues:
            if depth < len(queue) and len(picked) < limit:
                picked.add(queue[depth].id)
        depth += 1
    return [row for row in rows if row.id in picked]


def _marginally_balanced(queues: list[list[SuiteRow]], keys: Sequence[str], limit: int) -> list[list[SuiteRow]]:
    """The strata reordered so that every prefix holds each value of each key about equally often, and a --limit
    below the number of strata still spreads evenly over every factor's levels: step by step the stratum whose
    values are least ahead of their key's least-taken value (the most ahead first, then the sum), ties in the
    seeded order. Only the strata a limit can reach in its first round are ordered (all of them when it goes
    round again); the rest keep the seeded order."""
    seen: list[dict[str, int]] = [{} for _ in keys]
    codes = np.array([[seen[k].setdefault(canonical(queue[0].cell.get(key)), len(seen[k]))
                       for k, key in enumerate(keys)] for queue in queues])
    used = [np.zeros(int(column.max()) + 1, dtype=np.int64) for column in codes.T]
    free = np.ones(len(queues), dtype=bool)
    order = []
    for _ in range(len(queues) if limit >= len(queues) else limit):
        ahead = np.column_stack([used[k][codes[:, k]] - used[k].min() for k in range(len(keys))])
        score = ahead.max(axis=1) * (len(keys) * len(queues) + 1) + ahead.sum(axis=1)
        score[~free] = np.iinfo(np.int64).max
        pick = int(np.argmin(score))
        free[pick] = False
        order.append(pick)
        for k in range(len(keys)):
            used[k][codes[pick, k]] += 1
    return [queues[i] for i in order] + [queue for i, queue in enumerate(queues) if free[i]]


def plan(
    rows: list[SuiteRow],
    *,
    mode: str,
    limit: int | None = None,
    seed: int = 0,
    shard: Shard | None = None,
    strata: Sequence[str] | None = None,
    only: dict[str, str] | None = None,
) -> list[WorkItem]:
    """The run's work items. In logprob mode one call per row stands in for its samples.

    Rows that name a `unit` are taken whole: --limit then counts units (each stratified by its first row's
    cell) and shards split by unit, so that rows meant to be compared with each other, e.g. the two arms of
    a test, never split. `only` keeps the rows whose cell has the given values (compared as text, `null` for
    none): e.g. {"condition": "baseline"} for a noise-floor replicate."""
    if only:
        rows = [row for row in rows if all(_text(row.cell.get(key)) == value for key, value in only.items())]
    if limit is not None:
        rows = _whole_units(rows, limit, seed, strata) if any(r.unit for r in rows) else \
            stratified_subset(rows, limit, seed, strata)
    if shard is not None:  # by unit, so one shard generates a unit's shared turns for all its rows
        rows = [row for row in rows if shard.owns(row.unit or row.id)]
    if mode == "logprob":
        return [WorkItem(row, 0) for row in rows]
    return [WorkItem(row, s) for row in rows for s in range(row.samples)]


def _text(value: object) -> str:
    return "null" if value is None else str(value)


def prefix_order(items: list[WorkItem]) -> list[WorkItem]:
    """`items` with rows of the same text next to each other, and rows sharing a longer beginning nearer:
    the embedded model then reuses a shared prompt prefix's evaluation (spec_audits/local/evaluator.py)."""
    return sorted(items, key=lambda work: ([(m.role, m.content or "") for m in work.row.messages], work.sample))


def _whole_units(rows: list[SuiteRow], limit: int, seed: int, strata: Sequence[str] | None) -> list[SuiteRow]:
    first: dict[str, SuiteRow] = {}
    for row in rows:
        first.setdefault(row.unit or row.id, row)
    strata = [key for key in strata or () if key != "unit"] or None
    picked = {row.unit or row.id for row in stratified_subset(list(first.values()), limit, seed, strata)}
    return [row for row in rows if (row.unit or row.id) in picked]


@dataclass
class Estimate:
    """Dry-run figures for one model: an upper bound on completion tokens (max_tokens per call)."""

    model: str
    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float | None = None
    rounds: Counter[int] = field(default_factory=Counter)  # calls by their place in an item's chain of calls


def _tokens(text: str | None) -> int:
    return len(text or "") // 4 + 1  # ~4 characters per token; no tokenizer needed for an estimate


def _turn_tokens(row: SuiteRow, decode: DecodeSettings | None) -> int:
    """A generated turn's max_tokens: its own decode settings over the row's."""
    merged: DecodeSettings = {**row.decode, **(decode or {})}
    return int(merged.get("max_tokens") or 256)


def _add_item(main: Estimate, judges: Callable[[Judge], Estimate | None], work: WorkItem, mode: str,
              made: set[tuple[str, int]], named: Callable[[str], Estimate]) -> None:
    """Add one item's calls; a shared generated turn (`made` holds those counted) is counted once per sample, and
    a turn a named model writes (`Message.model`) is that model's call."""
    row = work.row
    max_tokens = 1 if mode == "logprob" else int(row.decode.get("max_tokens") or 256)
    context = 0
    messages = row.messages[:-1] if row.messages[-1].generate else row.messages
    step = 0
    for message in messages:
        if message.generate:
            step += 1
            turn_tokens = _turn_tokens(row, message.decode)
            if message.share is None or (message.share, work.sample) not in made:
                writer = main if message.model is None else named(message.model)
                writer.calls += 1
                writer.rounds[step] += 1
                writer.prompt_tokens += context
                writer.completion_tokens += turn_tokens
            if message.share is not None:
                made.add((message.share, work.sample))
            context += turn_tokens
        else:
            context += _tokens(message.content)
    step += 1
    main.calls += 1
    main.rounds[step] += 1
    main.prompt_tokens += context
    main.completion_tokens += max_tokens
    if row.extract is not None and mode != "logprob":  # the authors' extraction call reads the decision
        step += 1
        main.calls += 1
        main.rounds[step] += 1
        main.prompt_tokens += _tokens(row.extract.prompt) + max_tokens
        main.completion_tokens += EXTRACTION_MAX_TOKENS
    previous = max_tokens
    for followup in row.followups or []:
        reply_tokens = _turn_tokens(row, followup.decode)
        context += previous + _tokens(followup.content)
        step += 1
        main.calls += 1
        main.rounds[step] += 1
        main.prompt_tokens += context
        main.completion_tokens += reply_tokens
        judge = judges(followup.judge) if followup.judge else None
        if followup.judge and judge is not None:
            step += 1
            judge.calls += 1
            judge.rounds[step] += 1
            judge.prompt_tokens += _tokens(followup.judge.prompt) + reply_tokens
            judge.completion_tokens += JUDGE_MAX_TOKENS[followup.judge.reply]
        previous = reply_tokens


def _cost(estimate: Estimate) -> float | None:
    return cost_usd(estimate.model, estimate.prompt_tokens, estimate.completion_tokens)


def cost_usd(model: str, prompt_tokens: int, completion_tokens: int) -> float | None:
    """litellm's price of these tokens for `model`: 0 for the embedded model, None when litellm knows none."""
    import litellm

    if model.startswith("local/"):
        return 0.0
    try:
        prompt, completion = litellm.cost_per_token(
            model=model, prompt_tokens=prompt_tokens, completion_tokens=completion_tokens)
    except Exception:  # noqa: BLE001 - litellm raises assorted errors for models missing from its map
        return None
    return float(prompt + completion)


def estimate(items: list[WorkItem], *, mode: str, model: str, judge_model: str | None) -> list[Estimate]:
    """Calls, tokens and cost per model for `items`, without calling anything (re-asks not included)."""
    main = Estimate(model)
    judges: dict[str, Estimate] = {}

    def judge_of(judge: Judge) -> Estimate | None:
        """The judge a run calls: --judge-model, else the one the suite names."""
        name = judge_model or judge.model
        return judges.setdefault(name, Estimate(name)) if name else None

    def named(name: str) -> Estimate:
        return main if name == model else judges.setdefault(name, Estimate(name))

    made: set[tuple[str, int]] = set()
    for work in items:
        _add_item(main, judge_of, work, mode, made, named)
    estimates = [main] + [judge for judge in judges.values() if judge.calls]
    for entry in estimates:
        entry.cost_usd = _cost(entry)
    return estimates
