"""Checks on a suite's designs together, which `spec check` runs as `spec compile` does.

Each family proves its own design distinct and balanced; a suite of several designs must also agree on
its settings and be distinct and balanced as a whole. That needs the rows, so several designs are
expanded once without writing (the compile budget, checked first, bounds the work).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from spec_audits.compiler.errors import ErrorCollector
from spec_audits.compiler.family import PER_DESIGN, CompiledDesign, OwnAnalysis
from spec_audits.compiler.recorded import DESIGN_KEY
from spec_audits.contract.seeding import canonical_json


def _own(design: CompiledDesign) -> tuple[str, ...]:
    return design.own_analysis if isinstance(design, OwnAnalysis) else ()


def _shared_analysis(design: CompiledDesign) -> dict[str, Any]:
    """The analysis every design of a suite must share: all but the keys the design may have its own."""
    return {key: value for key, value in design.analysis.items() if key not in _own(design)}


def suite_analysis(designs: list[CompiledDesign]) -> dict[str, Any]:
    """manifest.analysis: the first design's, or, where the designs differ in keys each may have its own
    (OwnAnalysis), the shared keys and per design its own under `designs`."""
    first, own = designs[0].analysis, _own(designs[0])
    if all(design.analysis.get(key) == first.get(key) for design in designs for key in own):
        return first
    return {**_shared_analysis(designs[0]),
            PER_DESIGN: {design.name: {key: design.analysis[key] for key in own} for design in designs}}


_AGREED: tuple[tuple[str, Callable[[CompiledDesign], Any]], ...] = (
    ("mode", lambda d: d.mode), ("analysis", _shared_analysis), ("balance_keys", lambda d: d.balance_keys))


def check_suite(designs: list[CompiledDesign], errors: ErrorCollector) -> None:
    """The designs agree on mode, analysis and balance keys; several designs are distinct and balanced
    together."""
    for what, get in _AGREED:
        other = next((d for d in designs[1:] if get(d) != get(designs[0])), None)
        if other is not None:
            errors.add(other.span, f"designs of one suite must share their {what}: design '{other.name}' "
                       f"differs from '{designs[0].name}'",
                       "put designs with different settings in separate spec files")
            return
    if len(designs) > 1:
        _check_rows_together(designs, errors)


def _check_rows_together(designs: list[CompiledDesign], errors: ErrorCollector) -> None:
    """Expand every design once, without writing: no row twice, every cell the same trials."""
    from spec_audits.compiler.emit import Tally, UnbalancedError, balance_report  # only a suite of several designs
    from spec_audits.contract.writer import row_id

    tally, seen = Tally(), set()
    keys = designs[0].balance_keys
    for design in designs:
        for row in design.rows():  # told apart by their content, not by the design each records
            ident = row_id(canonical_json({**row, "cell": {k: v for k, v in row["cell"].items() if k != DESIGN_KEY}}))
            if ident in seen:
                errors.add(design.span, f"design '{design.name}' repeats a row of an earlier design (id {ident})",
                           "designs of one suite must not render the same prompt with the same cell")
                return
            seen.add(ident)
            tally.add(row, keys)
    try:
        balance_report(tally, keys, *shared_and_served(designs))
    except UnbalancedError as err:
        errors.add(designs[-1].span, f"the designs cannot be balanced together: {err}",
                   "every cell must get the same number of trials over all the suite's designs")


def shared_and_served(designs: list[CompiledDesign]) -> tuple[dict[str, str], dict[str, list[Any]]]:
    """The suite's shared conditions and the values their rows serve, merged over its designs."""
    served: dict[str, list[Any]] = {}
    shared: dict[str, str] = {}
    for design in designs:
        shared.update(design.shared)
        for key, values in design.served.items():
            served[key] = sorted(set(served.get(key, [])) | set(values))
    return shared, served

