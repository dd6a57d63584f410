"""The compile budget: rows, trials, output bytes and compile time a suite may have, checked before expansion.

A design that knows its size (compiler.family.PlannedDesign) is checked before its expansion starts: it
counts its rows, and a sample of its row groups, spread over the design, is rendered, serialised and
timed like the compile's own rows; the sample's mean row size and time stand for every row. Any other
design is counted as it expands and stopped at the budget, so a compile ends in bounded time either way.
The time is an estimate for the user only: it never reaches a compiled file.
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from compiler.emit import ROW_ID_BYTES, Tally, row_id
from compiler.errors import ErrorCollector, Span, SpecError
from compiler.family import CompiledDesign, PlannedDesign
from compiler.seeding import canonical_json

MAX_BYTES = 4 * 1024**3  # suite.jsonl; the sort holds 16 bytes a row, the file itself is on disk
SAMPLE_GROUPS = 8  # row groups sampled per design: the shipped specs' sizes come out within 2%
SAMPLE_SECONDS = 2.0  # a sample stops early after this long (templates near their render limits)


@dataclass(frozen=True)
class Budget:
    """The limits; `spec check/compile --max-rows/--max-trials/--max-seconds` raise all but the bytes."""

    rows: int = 2_000_000
    trials: int = 20_000_000
    bytes: int = MAX_BYTES
    seconds: float = 600.0


DEFAULT_BUDGET = Budget()


@dataclass(frozen=True)
class Size:
    """A suite's planned size, and its estimated compile time (with the rows the estimate sampled)."""

    rows: int
    trials: int
    bytes: int
    seconds: float = 0.0
    sampled: int = 0

    def describe(self) -> str:
        return f"{self.rows:,} rows, {self.trials:,} trials, about {_human(self.bytes)}"

    def describe_time(self) -> str:
        """The estimate, labelled as one."""
        return f"about {_seconds(self.seconds)} of CPU time (timed on {self.sampled:,} sampled rows)"


@dataclass(frozen=True)
class _Sample:
    rows: int = 0
    bytes: int = 0
    seconds: float = 0.0


def planned_size(designs: Sequence[CompiledDesign], checked_seconds: float) -> Size | None:
    """The suite's size before expansion, or None when a design cannot tell its own. The compile time (CPU)
    is `checked_seconds` and the samples (the checks, which a compile repeats) plus every row at its
    design's sampled pace; the checks of several designs together expand them once more."""
    plans, samples = [], []
    for design in designs:
        keys = design.balance_keys
        if not isinstance(design, PlannedDesign):
            return None
        plans.append(design.planned())
        samples.append(_sample(design.sample(SAMPLE_GROUPS), keys) if plans[-1].rows else _Sample())
    scaled = [(plan.rows / sample.rows if sample.rows else 0, sample) for plan, sample in zip(plans, samples,
                                                                                               strict=True)]
    expansion = sum(scale * sample.seconds for scale, sample in scaled) * (2 if len(designs) > 1 else 1)
    return Size(rows=sum(plan.rows for plan in plans), trials=sum(plan.trials for plan in plans),
                bytes=sum(round(scale * sample.bytes) for scale, sample in scaled),
                seconds=checked_seconds + sum(sample.seconds for sample in samples) + expansion,
                sampled=sum(sample.rows for sample in samples))


def _sample(rows: Iterator[dict[str, Any]], keys: tuple[str, ...]) -> _Sample:
    """Sampled rows, each serialised, identified and tallied as the emit stage does; stopped after
    SAMPLE_SECONDS."""
    tally, count, size = Tally(), 0, 0
    start, cpu = time.perf_counter(), time.process_time()
    for row in rows:
        body = canonical_json(row)
        row_id(body)
        tally.add(row, keys)
        count, size = count + 1, size + len(body.encode()) + ROW_ID_BYTES
        if time.perf_counter() - start > SAMPLE_SECONDS:
            break
    return _Sample(count, size, time.process_time() - cpu)


def check_budget(size: Size, budget: Budget, span: Span, errors: ErrorCollector) -> None:
    """Report each limit the planned size passes, with both numbers and the override; the time only when
    the counts are within theirs (too many rows take too long as well)."""
    before = len(errors.diagnostics)
    for what, planned, limit, option in (("rows", size.rows, budget.rows, "--max-rows"),
                                         ("trials", size.trials, budget.trials, "--max-trials"),
                                         ("bytes", size.bytes, budget.bytes, None)):
        if planned > limit:
            hint = f"pass {option} {planned} if this is intended" if option else "split the suite into several specs"
            errors.add(span, f"the suite would have {planned:,} {what}, over the budget of {limit:,}", hint)
    if size.seconds > budget.seconds and len(errors.diagnostics) == before:
        errors.add(span, f"the suite's compile is estimated at {size.describe_time()}, over the budget of "
                   f"{_seconds(budget.seconds)}",
                   f"pass --max-seconds {math.ceil(2 * size.seconds)} if this is intended (twice the estimate, "
                   "which varies with the machine's load)")


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


def _seconds(value: float) -> str:
    if value >= 10:
        return f"{value:,.0f} s"
    return f"{value:.1f} s" if value >= 0.1 else f"{value:.2g} s"
