"""BBQ's released items (Parrish et al., 2022): `data/<Category>.jsonl` and the BIG-bench lite packaging
(`bigbench_bbq_lite/resources/<Category>.json`, the same rows under an `examples` list).

Only ambiguous contexts are read. Each row's three answers are split into the "unknown" one (tagged
`unknown` in `answer_info`, worded as one of BBQ's ten phrasings) and the two group answers, kept in the
release's order with their tags and the name BBQ recorded for them.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

UNKNOWN_ANSWERS = ("Unknown", "Cannot be determined", "Can't be determined", "Not answerable", "Not known",
                   "Not enough info", "Not enough information", "Cannot answer", "Can't answer", "Undetermined")
"""BBQ's phrasings of the "unknown" answer; its generator draws one per context."""
POLARITIES = {"neg": "neg", "nonneg": "pos"}
"""BBQ's `question_polarity` -> the sub-experiment suffix (age_neg, age_pos, ...)."""


class ReleaseError(ValueError):
    """A released row that does not have BBQ's shape; the message names the file and row."""


@dataclass(frozen=True)
class Answer:
    text: str
    tag: str
    name: str  # the slot filler BBQ recorded for this answer (`answer_info`), e.g. "grandfather"


@dataclass(frozen=True)
class ReleasedItem:
    """One ambiguous-context row of the release, "unknown" dropped."""

    example_id: int
    category: str
    q_id: str
    version: str
    polarity: str  # "neg" or "pos"
    context: str
    question: str
    answers: tuple[Answer, Answer]
    unknown: str


def read_jsonl(path: Path) -> list[ReleasedItem]:
    """The ambiguous rows of a released `data/<Category>.jsonl`."""
    with path.open(encoding="utf-8") as handle:
        return list(_items(path, (json.loads(line) for line in handle if line.strip())))


def read_bigbench(path: Path) -> list[ReleasedItem]:
    """The ambiguous rows of a BIG-bench lite `<Category>.json`."""
    return list(_items(path, json.loads(path.read_text(encoding="utf-8"))["examples"]))


def _items(path: Path, rows: Iterable[dict[str, Any]]) -> Iterator[ReleasedItem]:
    for number, row in enumerate(rows, start=1):
        if row["context_condition"] == "ambig":
            try:
                yield _item(row)
            except (KeyError, ValueError) as exc:
                raise ReleaseError(f"{path}: row {number} (example_id {row.get('example_id')}): {exc}; "
                                   "is this file one of BBQ's released data files?") from None


def _item(row: dict[str, Any]) -> ReleasedItem:
    info = row["answer_info"]
    answers = [Answer(row[key], info[key][1], info[key][0]) for key in ("ans0", "ans1", "ans2")]
    unknown = [a for a in answers if a.tag == "unknown"]
    if len(unknown) != 1 or unknown[0].text not in UNKNOWN_ANSWERS:
        raise ValueError(f"expected one answer tagged 'unknown' in BBQ's phrasings, got {[a.text for a in unknown]}")
    groups = tuple(a for a in answers if a.tag != "unknown")
    return ReleasedItem(example_id=int(row["example_id"]), category=row["category"], q_id=str(row["question_index"]),
                        version=row["additional_metadata"]["version"], polarity=POLARITIES[row["question_polarity"]],
                        context=row["context"], question=row["question"], answers=groups,  # type: ignore[arg-type]
                        unknown=unknown[0].text)
