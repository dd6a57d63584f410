"""What every design family (influence pairs, cue visibility, ...) hands to the emit stage."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from spec_audits.base.records import Record
from spec_audits.compiler.errors import Span


class CompiledDesign(Protocol):
    """A checked, prepared design: it knows its rows and the balance it guarantees."""

    @property
    def name(self) -> str: ...

    @property
    def span(self) -> Span: ...

    @property
    def mode(self) -> str: ...

    @property
    def analysis(self) -> dict[str, Any]: ...

    @property
    def balance_keys(self) -> tuple[str, ...]:
        """Cell coordinates over which every cell has the same number of trials."""
        ...

    @property
    def shared(self) -> dict[str, str]:
        """Condition -> the key whose every value its rows serve (e.g. baseline -> influence)."""
        ...

    @property
    def served(self) -> dict[str, list[Any]]:
        """Key -> the values shared rows serve; a shared key not listed serves the values the design's
        other rows carry in the same cell."""
        ...

    def summary(self) -> str:
        """One line for `spec check`: what the design crosses."""
        ...

    def rows(self) -> Iterator[dict[str, Any]]:
        """Every row of the design, as dicts ready to serialise (ids not yet attached)."""
        ...


@dataclass(kw_only=True)
class Compiled:
    """The plain fields of a CompiledDesign with their usual values, for a family's own design to extend with
    its `summary()` and `rows()` (spec_audits/examples/echo.py): a sampled design with no shared rows. The one
    dataclass a spec check builds: plug-ins extend it with `@dataclass(kw_only=True)`, which reads the fields of
    dataclasses only."""

    name: str
    span: Span
    analysis: dict[str, Any]  # {"family": NAME, ...}: what the compile writes in manifest.analysis
    balance_keys: tuple[str, ...]
    mode: str = "sample"
    shared: dict[str, str] = field(default_factory=dict)
    served: dict[str, list[Any]] = field(default_factory=dict)


class Plan(Record):
    """How big a design's expansion will be, known before it starts."""

    rows: int
    trials: int


@runtime_checkable
class PlannedDesign(Protocol):
    """A design that can tell its size before expansion, so the compile budget is checked up front
    (designs without it are counted as they expand, and stopped at the budget)."""

    def planned(self) -> Plan: ...

    def sample(self, groups: int) -> Iterator[dict[str, Any]]:
        """The rows, exactly as rows() gives them, of at most `groups` of the design's groups (e.g. one
        stimulus with every condition and order), spread evenly over the design (`spread`) and built
        without expanding the rest. A group holds the mix of kinds the whole design has, so the sample's
        mean row size and render time stand for the suite's."""
        ...


PER_DESIGN = "designs"  # manifest.analysis's key of each design's own analysis keys (OwnAnalysis), where they differ


@runtime_checkable
class OwnAnalysis(Protocol):
    """A design some of whose analysis keys may differ between the designs of one suite (an effects design's
    answer form): where they differ, manifest.analysis lists them per design under `designs`."""

    @property
    def own_analysis(self) -> tuple[str, ...]: ...


def spread(total: int, count: int) -> list[int]:
    """`count` indices spread evenly over range(total), the middle of each equal stretch (all of them when
    total <= count): the same indices on every call."""
    if total <= count:
        return list(range(total))
    return [(2 * i + 1) * total // (2 * count) for i in range(count)]
