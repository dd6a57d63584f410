"""The compile budget: rows, trials and output bytes a suite may have, checked before expansion.

A design that knows its size (compiler.family.PlannedDesign) is checked before a row is built; the bytes
are estimated from one rendered row per design. Any other design is counted as it expands and stopped at
the budget, so a compile ends in bounded time either way.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from compiler.errors import ErrorCollector, Span, SpecError
from compiler.family import CompiledDesign, Plan, PlannedDesign
from compiler.seeding import canonical_json

MAX_BYTES = 4 * 1024**3  # suite.jsonl; the sort holds 16 bytes a row, the file itself is on disk


@dataclass(frozen=True)
class Budget:
    """The limits; `spec check/compile --max-rows/--max-trials` raise the first two."""

    rows: int = 2_000_000
    trials: int = 20_000_000
    bytes: int = MAX_BYTES


DEFAULT_BUDGET = Budget()


@dataclass(frozen=True)
class Size:
    """A suite's planned size."""

    rows: int
    trials: int
    bytes: int

    def describe(self) -> str:
        return f"{self.rows:,} rows, {self.trials:,} trials, about {_human(self.bytes)}"


def planned_size(designs: Iterable[CompiledDesign]) -> Size | None:
    """The suite's size before expansion, or None when a design cannot tell its own."""
    rows = trials = size = 0
    for design in designs:
        if not isinstance(design, PlannedDesign):
            return None
        plan: Plan = design.planned()
        first = next(iter(design.rows()), None) if plan.rows else None
        rows, trials = rows + plan.rows, trials + plan.trials
        size += plan.rows * (len(canonical_json(first)) + 20 if first is not None else 0)  # + the id field
    return Size(rows, trials, size)


def check_budget(size: Size, budget: Budget, span: Span, errors: ErrorCollector) -> None:
    """Report each limit the planned size passes, with both numbers and the override."""
    for what, planned, limit, option in (("rows", size.rows, budget.rows, "--max-rows"),
                                         ("trials", size.trials, budget.trials, "--max-trials"),
                                         ("bytes", size.bytes, budget.bytes, None)):
        if planned > limit:
            hint = f"pass {option} {planned} if this is intended" if option else "split the suite into several specs"
            errors.add(span, f"the suite would have {planned:,} {what}, over the budget of {limit:,}", hint)


def counted(rows: Iterator[dict[str, Any]], budget: Budget, span: Span) -> Iterator[dict[str, Any]]:
    """The rows of designs that could not plan, stopped with a located error at the budget."""
    count = trials = 0
    for row in rows:
        count, trials = count + 1, trials + int(row.get("samples", 1))
        if count > budget.rows or trials > budget.trials:
            errors = ErrorCollector()
            check_budget(Size(count, trials, 0), budget, span, errors)
            raise SpecError(errors.diagnostics)
        yield row


def _human(size: int) -> str:
    value, unit = float(size), "bytes"
    for bigger in ("KB", "MB", "GB"):
        if value < 1000:
            break
        value, unit = value / 1000, bigger
    return f"{size} bytes" if unit == "bytes" else f"{value:,.1f} {unit}"
