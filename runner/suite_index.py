"""What a run keeps of each suite row while it plans: a few numbers in arrays, never the row.

A row's byte offset (to read it again when its turn comes), samples, a 64-bit hash of its id and of its unit,
the code of its stratum, and whether `--only` and `--shard` keep it: about 40 bytes a row, so a run plans a
million rows in tens of MB. The --limit subset is drawn from these arrays with the same seeded draws as from
the rows themselves (a shuffle depends only on a list's length).
"""

from __future__ import annotations

import random
from array import array
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from spec_audits.contract.seeding import canonical_json as canonical
from spec_audits.contract.suite_model import SuiteRow
from spec_audits.contract.unique_ids import id_hash

_GOLDEN = 0x9E3779B97F4A7C15  # spreads a sample number over 64 bits before it is mixed into an id's hash


def item_keys(ids: np.ndarray, samples: np.ndarray) -> np.ndarray:
    """The 64-bit keys of (id hash, sample) pairs, as `item_key` computes one."""
    with np.errstate(over="ignore"):
        return ids.astype(np.uint64) ^ ((samples.astype(np.uint64) + np.uint64(1)) * np.uint64(_GOLDEN))


def item_key(item_id: str, sample: int) -> int:
    """The 64-bit key of one (item, sample): how a streamed run tells answers already written from work to do."""
    return int(item_keys(np.array([id_hash(item_id)], dtype=np.uint64), np.array([sample]))[0])


def _text(value: object) -> str:
    return "null" if value is None else str(value)


@dataclass
class RowIndex:
    """The arrays of a suite's rows, in suite order; `add` one row at a time (as the reader streams them)."""

    strata: Sequence[str] | None = None
    only: dict[str, str] | None = None
    owns: Any = None  # a Shard's `owns`, or None for every row
    offsets: array[int] = field(default_factory=lambda: array("q"))
    samples: array[int] = field(default_factory=lambda: array("q"))
    ids: array[int] = field(default_factory=lambda: array("Q"))
    units: array[int] = field(default_factory=lambda: array("Q"))
    codes: array[int] = field(default_factory=lambda: array("q"))
    kept: array[int] = field(default_factory=lambda: array("b"))
    owned: array[int] = field(default_factory=lambda: array("b"))
    unjudged: array[int] = field(default_factory=lambda: array("b"))  # a follow-up's judge names no model
    cells: list[dict[str, Any]] = field(default_factory=list)
    has_units: bool = False
    answer_line: bool = False
    answer_form: bool = False
    shares: bool = False
    _code_of: dict[str, int] = field(default_factory=dict)

    def add(self, offset: int, row: SuiteRow) -> None:
        cell = row.cell if self.strata is None else {key: row.cell.get(key) for key in self.strata}
        code = self._code_of.setdefault(canonical(cell), len(self._code_of))
        if code == len(self.cells):
            self.cells.append(cell)
        unit = row.unit or row.id
        self.offsets.append(offset)
        self.samples.append(row.samples)
        self.ids.append(id_hash(row.id))
        self.units.append(id_hash(unit))
        self.codes.append(code)
        self.kept.append(not self.only or all(_text(row.cell.get(k)) == v for k, v in self.only.items()))
        self.owned.append(self.owns is None or self.owns(unit))
        self.unjudged.append(any(f.judge is not None and not f.judge.model for f in row.followups or []))
        self.has_units = self.has_units or row.unit is not None
        self.answer_line = self.answer_line or "answer_line" in row.decode
        self.answer_form = self.answer_form or row.answer_form is not None
        self.shares = self.shares or any(message.share is not None for message in row.messages)

    def select(self, limit: int | None, seed: int) -> np.ndarray:
        """The positions of the rows a run takes, in suite order: --only, then --limit, then --shard."""
        kept = np.flatnonzero(np.frombuffer(self.kept, dtype=np.int8))
        if limit is not None:
            kept = self._whole_units(kept, limit, seed) if self.has_units else \
                stratified(kept, np.frombuffer(self.codes, dtype=np.int64)[kept], self._keys(self.strata),
                           limit, seed, self.strata)
        owned: np.ndarray = np.frombuffer(self.owned, dtype=np.int8)[kept].astype(bool)
        return np.asarray(kept[owned])

    def _keys(self, strata: Sequence[str] | None) -> list[dict[str, Any]]:
        """Each stratum code's cell, over `strata` (a subset of the keys the codes were made over)."""
        return self.cells if strata is None else [{key: cell.get(key) for key in strata} for cell in self.cells]

    def _whole_units(self, kept: np.ndarray, limit: int, seed: int) -> np.ndarray:
        """Whole units: the units' first rows stratified (over the strata less `unit`), then all their rows."""
        units = np.frombuffer(self.units, dtype=np.uint64)[kept]
        _, first = np.unique(units, return_index=True)
        first = np.sort(first)
        strata = [key for key in self.strata or () if key != "unit"] or None
        cells = self._keys(strata)
        recode = {canonical(cell): code for code, cell in reversed(list(enumerate(cells)))}
        codes = np.array([recode[canonical(cell)] for cell in cells], dtype=np.int64)
        row_codes = codes[np.frombuffer(self.codes, dtype=np.int64)[kept[first]]]
        picked = stratified(np.arange(len(first)), row_codes, cells, limit, seed, strata)
        return kept[np.isin(units, units[first[picked]])]


def stratified(positions: np.ndarray, codes: np.ndarray, cells: list[dict[str, Any]], limit: int, seed: int,
               strata: Sequence[str] | None) -> np.ndarray:
    """`limit` of `positions` spread evenly over strata (`codes`, each a code of `cells`): strata visited round-robin
    in a seeded order, positions within a stratum in a seeded order; returned in suite order.

    A stratum is the row's whole cell, or only the cell keys in `strata` (a suite's balance keys, e.g. factor x
    influence x condition, so that every condition of the design gets answers)."""
    order = np.argsort(codes, kind="stable")
    present, starts = np.unique(codes[order], return_index=True)
    groups = np.split(positions[order], starts[1:])
    by_key = sorted(zip((canonical(cells[code]) for code in present), groups, present, strict=True),
                    key=lambda entry: entry[0])
    rng = random.Random(seed)
    queues = [(group.copy(), int(code)) for _, group, code in by_key]
    rng.shuffle(queues)
    for queue, _ in queues:
        rng.shuffle(queue)  # type: ignore[arg-type]  # a 1-D array swaps its items as a list does
    if strata is not None and len(strata) > 1:
        queues = _marginally_balanced(queues, [cells[code] for _, code in queues], strata, limit)
    return _deal(queues, min(limit, len(positions)))


def _deal(queues: list[tuple[np.ndarray, int]], wanted: int) -> np.ndarray:
    """One from each queue in turn, round after round, until `wanted` are taken; in suite order."""
    picked: list[int] = []
    depth = 0
    while len(picked) < wanted:
        for queue, _ in queues:
            if depth < len(queue) and len(picked) < wanted:
                picked.append(int(queue[depth]))
        depth += 1
    return np.sort(np.array(picked, dtype=np.int64))


def _marginally_balanced(queues: list[Any], heads: list[dict[str, Any]], keys: Sequence[str],
                         limit: int) -> list[Any]:
    """The strata reordered so that every prefix holds each value of each key about equally often, and a --limit
    below the number of strata still spreads evenly over every factor's levels: step by step the stratum whose
    values are least ahead of their key's least-taken value (the most ahead first, then the sum), ties in the
    seeded order. Only the strata a limit can reach in its first round are ordered (all of them when it goes
    round again); the rest keep the seeded order. `heads` holds each queue's cell."""
    seen: list[dict[str, int]] = [{} for _ in keys]
    codes = np.array([[seen[k].setdefault(canonical(head.get(key)), len(seen[k]))
                       for k, key in enumerate(keys)] for head in heads])
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
