"""Failed items of a run: held back while they all fail alike, so an error that repeats stops the run.

A provider error that fails every item (a parameter the model refuses, a server that answers 500 to
everything) is not the item's fault; a prompt too long for the model or refused for its content is, and
is written at once. Failed rows are held while they share one reason; a success or a
different reason releases them to results.jsonl, and REPEATS of them in a row stop the run with that
reason, writing none of them: a rerun after the fix asks those items again without --retry-failed.
"""

from __future__ import annotations

import re

from spec_audits.contract.results_model import ResultRow
from spec_audits.runner.services.provider_errors import FatalError

REPEATS = 10
_NUMBERS = re.compile(r"\d+")
# failures that belong to the item (its prompt's length or content, its answer), not to the model or the
# endpoint: written as they come, however many in a row
_OWN = re.compile(r"(?:ContextWindowExceededError|ContentPolicyViolationError):|no valid answer token")


def _signature(error: str) -> str:
    """The reason with its numbers blanked: "max context 8, you sent 912" repeats whatever the counts."""
    return _NUMBERS.sub("#", error)


class RepeatBreaker:
    """Feed every row to `take`, write what it returns, and `release` the rest when the run ends."""

    def __init__(self, model: str, repeats: int = REPEATS) -> None:
        self.model, self.repeats = model, repeats
        self.held: list[ResultRow] = []

    def take(self, row: ResultRow) -> list[ResultRow]:
        if row.error is None:
            return [*self.release(), row]
        if _OWN.match(row.error):
            return [row]
        if self.held and _signature(self.held[0].error or "") != _signature(row.error):
            ready = self.release()
            self.held.append(row)
            return ready
        self.held.append(row)
        if len(self.held) >= self.repeats:
            raise FatalError(f"{self.model}: {len(self.held)} items in a row failed with the same error: "
                             f"{row.error}. Fix its cause; those items are not recorded as failed")
        return []

    def release(self) -> list[ResultRow]:
        ready, self.held = self.held, []
        return ready
