"""Work items of a run: every (row, sample), or a seeded subset stratified over cells, or one shard."""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from spec_audits.contract.reader import (
    SuiteHead,
    check_suite_integrity,
    read_manifest,
    read_rows_at,
    scan_suite,
)
from spec_audits.contract.suite_model import Judge, SuiteRow
from spec_audits.contract.suite_terms import DecodeSettings
from spec_audits.contract.unique_ids import id_hash
from spec_audits.runner.suite_index import RowIndex, item_keys

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
    none): e.g. {"condition": "baseline"} for a noise-floor replicate. A run streams its suite instead
    (`Plan`), with the same selection."""
    index = RowIndex(strata, only, shard.owns if shard else None)
    for position, row in enumerate(rows):
        index.add(position, row)
    picked = index.select(limit, seed).tolist()
    if mode == "logprob":
        return [WorkItem(rows[i], 0) for i in picked]
    return [WorkItem(rows[i], s) for i in picked for s in range(rows[i].samples)]


@dataclass
class Plan:
    """A run's work items without its rows: the rows' positions and samples, read again from suite.jsonl one at a
    time as the items are taken (`items`), so that a run holds only the rows in flight."""

    index: RowIndex
    path: Path
    rows: np.ndarray
    samples: np.ndarray
    _by_id: np.ndarray | None = None  # the rows' positions sorted by id hash, made when `row_of` is first asked

    @classmethod
    def of(cls, index: RowIndex, path: Path, *, mode: str, limit: int | None, seed: int) -> Plan:
        picked = index.select(limit, seed)
        counts = np.ones(len(picked), dtype=np.int64) if mode == "logprob" else \
            np.frombuffer(index.samples, dtype=np.int64)[picked]
        rows = np.repeat(picked, counts)
        starts = np.cumsum(counts) - counts
        samples = np.arange(len(rows), dtype=np.int64) - np.repeat(starts, counts)
        return cls(index, path, rows, samples)

    def __len__(self) -> int:
        return len(self.rows)

    def keys(self) -> np.ndarray:
        """Each item's 64-bit (id, sample) key (`suite_index.item_key`)."""
        return item_keys(np.frombuffer(self.index.ids, dtype=np.uint64)[self.rows], self.samples)

    def without(self, done: np.ndarray) -> Plan:
        """The items whose keys are not in `done`."""
        todo = ~np.isin(self.keys(), done)
        return Plan(self.index, self.path, self.rows[todo], self.samples[todo])

    def __iter__(self) -> Iterator[WorkItem]:
        """The work items in order, each row read once however many samples it has."""
        offsets = np.frombuffer(self.index.offsets, dtype=np.int64)
        changes = np.flatnonzero(np.diff(self.rows, prepend=-1))
        bounds = [*changes.tolist(), len(self.rows)]
        found = read_rows_at(self.path, (int(offsets[self.rows[i]]) for i in changes))
        for start, end, row in zip(bounds, bounds[1:], found, strict=False):
            for sample in self.samples[start:end].tolist():
                yield WorkItem(row, sample)

    def first_unjudged(self) -> SuiteRow | None:
        """The first planned row with a follow-up whose judge names no model, read from the file; None if none."""
        flagged = np.flatnonzero(np.frombuffer(self.index.unjudged, dtype=np.int8)[self.rows])
        if not len(flagged):
            return None
        offset = int(np.frombuffer(self.index.offsets, dtype=np.int64)[self.rows[flagged[0]]])
        return next(read_rows_at(self.path, [offset]))

    def row_of(self, item_id: str) -> SuiteRow | None:
        """The suite row with this id (any row of the suite, planned or not), read from the file; None if none."""
        ids = np.frombuffer(self.index.ids, dtype=np.uint64)
        if self._by_id is None:
            self._by_id = np.argsort(ids, kind="stable")
        wanted = np.uint64(id_hash(item_id))
        at = int(np.searchsorted(ids[self._by_id], wanted))
        offsets = np.frombuffer(self.index.offsets, dtype=np.int64)
        while at < len(ids) and ids[self._by_id[at]] == wanted:
            row = next(read_rows_at(self.path, [int(offsets[self._by_id[at]])]))
            if row.id == item_id:
                return row
            at += 1
        return None


def index_suite(suite_dir: Path, shard: Shard | None, only: dict[str, str]) -> tuple[SuiteHead, RowIndex]:
    """A suite read in one stream, hashed and checked against its manifest, into the index a run plans with."""
    manifest, _ = read_manifest(suite_dir)
    strata = manifest.balance[0].keys if manifest.balance else None
    index = RowIndex(strata, only, shard.owns if shard else None)
    suite = scan_suite(suite_dir, index.add)
    check_suite_integrity(suite)
    return suite, index


def prefix_order(items: list[WorkItem]) -> list[WorkItem]:
    """`items` with rows of the same text next to each other, and rows sharing a longer beginning nearer:
    the embedded model then reuses a shared prompt prefix's evaluation (spec_audits/local/evaluator.py)."""
    return sorted(items, key=lambda work: ([(m.role, m.content or "") for m in work.row.messages], work.sample))


@dataclass
class Estimate:
    """Dry-run figures for one model: an upper bound on completion tokens (max_tokens per call)."""

    model: str
    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float | None = None
    rounds: Counter[int] = field(default_factory=Counter)  # calls by their place in an item's chain of calls

    def add(self, step: int, prompt_tokens: int, completion_tokens: int) -> None:
        """One call, the `step`-th of its item's chain."""
        self.calls += 1
        self.rounds[step] += 1
        self.prompt_tokens += prompt_tokens
        self.completion_tokens += completion_tokens


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
    step, context = _add_turns(main, work, made, named)
    step += 1
    main.add(step, context, max_tokens)
    if row.extract is not None and mode != "logprob":  # the authors' extraction call reads the decision
        step += 1
        main.add(step, _tokens(row.extract.prompt) + max_tokens, EXTRACTION_MAX_TOKENS)
    previous = max_tokens
    for followup in row.followups or []:
        reply_tokens = _turn_tokens(row, followup.decode)
        context += previous + _tokens(followup.content)
        step += 1
        main.add(step, context, reply_tokens)
        judge = judges(followup.judge) if followup.judge else None
        if followup.judge and judge is not None:
            step += 1
            judge.add(step, _tokens(followup.judge.prompt) + reply_tokens, JUDGE_MAX_TOKENS[followup.judge.reply])
        previous = reply_tokens


def _add_turns(main: Estimate, work: WorkItem, made: set[tuple[str, int]],
               named: Callable[[str], Estimate]) -> tuple[int, int]:
    """Add the calls of the conversation's generated turns before the asked one: (calls in the chain so far, the
    asked turn's prompt tokens)."""
    row = work.row
    context = 0
    messages = row.messages[:-1] if row.messages[-1].generate else row.messages
    step = 0
    for message in messages:
        if message.generate:
            step += 1
            turn_tokens = _turn_tokens(row, message.decode)
            if message.share is None or (message.share, work.sample) not in made:
                (main if message.model is None else named(message.model)).add(step, context, turn_tokens)
            if message.share is not None:
                made.add((message.share, work.sample))
            context += turn_tokens
        else:
            context += _tokens(message.content)
    return step, context


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


def estimate(items: Iterable[WorkItem], *, mode: str, model: str, judge_model: str | None) -> list[Estimate]:
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
