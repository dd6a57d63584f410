"""What every row of every design records besides what its family writes: the conversation it is played
through (its answered turns carry the meanings the row records, spec_audits.contract.suite_model.MEANINGS)
and, in a suite of several designs, the design it came from (`cell.design`). Family-blind: it wraps the rows
a family made, so every family's rows are told apart by design the same way."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from spec_audits.compiler.errors import Diagnostic, SpecError
from spec_audits.compiler.family import CompiledDesign

if TYPE_CHECKING:  # only a design with a `conversation` clause loads them (compiler/dispatch/designs.py)
    from spec_audits.compiler.conversations import CompiledConversation

DESIGN_KEY = "design"  # the cell key naming a row's design in a suite of several designs


class RecordedDesign:
    """A family's compiled design whose rows (and sample) carry the records above."""

    def __init__(self, inner: CompiledDesign, conversation: CompiledConversation | None, several: bool) -> None:
        self._inner = inner
        self._conversation = conversation
        self._several = several

    def __getattr__(self, name: str) -> Any:
        value = getattr(self._inner, name)
        if name in ("rows", "sample"):  # a design without `sample` stays one without it
            def recorded(*args: Any) -> Iterator[dict[str, Any]]:
                return (self._record(row) for row in value(*args))

            return recorded
        return value

    def _record(self, row: dict[str, Any]) -> dict[str, Any]:
        if self._conversation is not None:
            row = self._conversation.play(row)
        if not self._several:
            return row
        if DESIGN_KEY in row["cell"]:
            raise SpecError([Diagnostic(self._inner.span, f"design '{self._inner.name}' has a cell key "
                                        f"'{DESIGN_KEY}', which names the design of each row in a suite of "
                                        "several designs", "rename that factor or key: rows must say which "
                                        "design they come from")])
        return {**row, "cell": {**row["cell"], DESIGN_KEY: self._inner.name}}
