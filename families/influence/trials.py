"""`trials N per cell [seed S]`: a seeded N of every cell's trials (how the follow-up probe, App. P, is sampled).

A cell is (factor, influence, condition); a shared baseline is one cell per factor. A cell's trials are
its rows' replicates: a size-pair design names a row within its cell by (n_A, n_B, order), an item
design by (item, order). Every trial is ranked by a hash of (seed, cell, row, replicate) and the first N
are kept, so the draw is uniform over comparisons (or items), display orders and replicates, and one
cell's draw never moves another's. A row then asks for as many samples as were drawn from it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from typing import Any

from spec_audits.sdk import ErrorCollector, Plan, Record, item_rng

Cell = tuple[str, str | None, str]
"""(factor, influence, condition) of a balance cell; influence None for a shared baseline."""
Slot = tuple[Any, ...]
"""The cell coordinates that name one row within its cell, e.g. (n_A, n_B, order)."""


class Picks(Record):
    """The samples each row keeps: `kept[cell][slot]`, where a row's slot is its cell's `slot_keys`."""

    slot_keys: tuple[str, ...]
    kept: dict[Cell, Counter[Slot]]

    def plan(self) -> Plan:
        """The rows and trials drawn: each slot kept in a cell is one row."""
        return Plan(sum(len(slots) for slots in self.kept.values()), sum(slots.total() for slots in self.kept.values()))

    def samples(self, cell: dict[str, Any]) -> int:
        return self.kept[(cell["factor"], cell["influence"], cell["condition"])][tuple(cell[k] for k in self.slot_keys)]


def cells(design: Any, factor: str) -> Iterator[Cell]:
    """The cells of one factor (a cell's `factor` coordinate) of an influence design."""
    for cond in design.conditions:
        shared = cond.toward is None and cond.shared
        for inf in [None] if shared else [inf.name for inf in design.influences]:
            yield (factor, inf, cond.key)


def pick_trials(design: Any, seed: int, slot_keys: tuple[str, ...], slots: dict[str, list[Slot]],
                what: dict[str, str], errors: ErrorCollector) -> Picks | None:
    """N trials of every cell of `design` (its `trials` clause): `slots` holds each factor coordinate's
    rows, the same in each of its cells, and `what` names the coordinate in messages ("factor 'age'").
    None after reporting a cell that is too small."""
    count, trial_seed = design.trials
    replicates = design.samples_per_row
    smallest = min(slots, key=lambda factor: len(slots[factor]))
    available = len(slots[smallest]) * replicates
    if count > available:
        errors.add(design.design.get("trials").span, f"trials {count} per cell asks for more than the "
                   f"{available} trials of a cell of {what[smallest]}", f"ask for at most {available}")
        return None
    kept: dict[Cell, Counter[Slot]] = {}
    for factor, rows in slots.items():
        trials = [(*row, r) for row in rows for r in range(replicates)]
        for cell in cells(design, factor):
            rank = sorted(trials, key=lambda t: item_rng(trial_seed if trial_seed is not None else seed,
                                                         "trials", *cell, *t).random())
            kept[cell] = Counter(t[:-1] for t in rank[:count])
    return Picks(slot_keys, kept)
