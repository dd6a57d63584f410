"""The compile budget: rows, trials, output bytes and compile time a suite may have, checked before expansion.

A design that knows its size (spec_audits.compiler.family.PlannedDesign) is checked before its expansion starts: it
counts its rows, and a sample of its row groups, spread over the design, is rendered and serialised like
the compile's own rows; the sample's mean row size and template work (steps counted by spec_audits.compiler.sandbox)
stand for every row. Any other design is counted as it expands and stopped at the budget, so a compile
ends in bounded work either way. Nothing here reads a clock: the compile time is estimated from the
counts at a fixed reference pace, so whether a spec is within budget is the same on every machine and
under any load. The estimate never reaches a compiled file.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from spec_audits.base.records import Record
from spec_audits.compiler.errors import ErrorCollector, Span, SpecError
from spec_audits.compiler.family import CompiledDesign, PlannedDesign
from spec_audits.compiler.sandbox import MAX_STEPS, tally_steps
from spec_audits.contract.seeding import canonical_json
from spec_audits.contract.writer import ROW_ID_BYTES

MAX_BYTES = 4 * 1024**3  # suite.jsonl; the sort holds 16 bytes a row, the file itself is on disk
SAMPLE_GROUPS = 8  # row groups sampled per design: the shipped specs' sizes come out within 2%
SAMPLE_STEPS = 2 * MAX_STEPS  # a sample stops early after this much template work (templates near their limits)
# The reference pace: CPU seconds per row, per byte written and per template step, fitted on an idle 2-core
# machine to the shipped specs' compiles (benchmarks/compile_estimate_bench.py prints estimate / actual).
ROW_SECONDS = 1.0e-5
BYTE_SECONDS = 5.0e-8
STEP_SECONDS = 3.0e-7


class Budget(Record):
    """The limits; `spec check/compile --max-rows/--max-trials/--max-seconds` raise all but the bytes."""

    rows: int = 2_000_000
    trials: int = 20_000_000
    bytes: int = MAX_BYTES
    seconds: float = 600.0


DEFAULT_BUDGET = Budget()


class Size(Record):
    """A suite's planned size, and its estimated compile time (with the rows and template steps it counted)."""

    rows: int
    trials: int
    bytes: int
    seconds: float = 0.0
    sampled: int = 0
    steps: int = 0

    def describe(self) -> str:
        return f"{self.rows:,} rows, {self.trials:,} trials, about {_human(self.bytes)}"

    def describe_time(self) -> str:
        """The estimate, labelled as one."""
        return (f"about {_seconds(self.seconds)} of CPU time at the reference pace (counted on {self.sampled:,} "
                f"sampled rows: {self.steps:,} template steps)")


class _Sample(Record):
    rows: int = 0
    bytes: int = 0
    steps: int = 0

    @property
    def seconds(self) -> float:
        """The sample's compile time at the reference pace."""
        return self.rows * ROW_SECONDS + self.bytes * BYTE_SECONDS + self.steps * STEP_SECONDS


def planned_size(designs: Sequence[CompiledDesign]) -> Size | None:
    """The suite's size before expansion, or None when a design cannot tell its own. The compile time is
    every row at its design's sampled pace (the checks of several designs together expand them once more)."""
    plans, samples = [], []
    for design in designs:
        if not isinstance(design, PlannedDesign):
            return None
        plans.append(design.planned())
        samples.append(_sample(design.sample(SAMPLE_GROUPS)) if plans[-1].rows else _Sample())
    scaled = [(plan.rows / sample.rows if sample.rows else 0, sample) for plan, sample in zip(plans, samples,
                                                                                               strict=True)]
    expansion = sum(scale * sample.seconds for scale, sample in scaled) * (2 if len(designs) > 1 else 1)
    return Size(rows=sum(plan.rows for plan in plans), trials=sum(plan.trials for plan in plans),
                bytes=sum(round(scale * sample.bytes) for scale, sample in scaled), seconds=expansion,
                sampled=sum(sample.rows for sample in samples), steps=sum(sample.steps for sample in samples))


def _sample(rows: Iterator[dict[str, Any]]) -> _Sample:
    """Sampled rows, each serialised as the emit stage writes it (its id adds ROW_ID_BYTES), with the template
    steps their renders took; stopped after SAMPLE_STEPS."""
    count = size = 0
    with tally_steps() as steps:
        for row in rows:
            count, size = count + 1, size + len(canonical_json(row).encode()) + ROW_ID_BYTES
            if steps.steps > SAMPLE_STEPS:
                break
    return _Sample(count, size, steps.steps)


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
                   f"pass --max-seconds {math.ceil(size.seconds)} if this is intended")


def counted(rows: Iterable[dict[str, Any]], budget: Budget, span: Span) -> Iterator[dict[str, Any]]:
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
