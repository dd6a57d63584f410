"""Puzzles as answers (`answer solution PUZZLE`): a reply read as an assignment of the row's puzzle, and
scored by exact match of the solved assignment and by per-cell accuracy, for propositional and zebra
puzzles alike (both store `solution` as person -> attribute -> value; zebra people are positions "1".."N").

The reply writes one line per person, its label then a colon, then the person's values in any order, with
or without the attribute's name: `A: woman, Muslim`, `Person B: gender = non-binary; race = Black`,
`Position 2: red, dog`. A cell is read when the person's line names exactly one of the attribute's values
(as whole words, case-insensitively); a line naming two values of one attribute, or a person with two
lines, leaves those cells unread, never guessed.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from spec_audits.contract.suite_terms import SOLUTION_OUTCOMES

Assignment = dict[str, dict[str, str]]
SOLUTION_FORMAT = "one line per person: its label, a colon, then its values (e.g. `A: woman, Muslim`)"
SOLVED, UNSOLVED = SOLUTION_OUTCOMES
_LABEL = re.compile(r"^[\s*_#>-]*(?:(?:person|position|house|seat)\s+)?(?P<label>[^\s:]+)\s*[:=\-]\s*(?P<rest>.*)$",
                    re.IGNORECASE)


def _mentions(text: str, value: str) -> bool:
    return re.search(rf"(?<![\w-]){re.escape(value)}(?![\w-])", text, re.IGNORECASE) is not None


def read_solution(text: str | None, puzzle: Mapping[str, Any]) -> Assignment:
    """The cells of `puzzle`'s assignment that the reply states unambiguously (person -> attribute -> value)."""
    people = [str(p) for p in puzzle["people"]]
    domain: Mapping[str, list[str]] = puzzle["domain"]
    lines: dict[str, list[str]] = {}
    for line in (text or "").splitlines():
        match = _LABEL.match(line.strip())
        label = match.group("label").strip("*_`\"'") if match else None
        person = next((p for p in people if label is not None and p.casefold() == label.casefold()), None)
        if person is not None and match is not None:
            lines.setdefault(person, []).append(match.group("rest"))
    read: Assignment = {}
    for person, found in lines.items():
        if len(found) != 1:
            continue
        cells = {attribute: [v for v in values if _mentions(found[0], v)] for attribute, values in domain.items()}
        chosen = {attribute: named[0] for attribute, named in cells.items() if len(named) == 1}
        if chosen:
            read[person] = chosen
    return read


def cell_accuracy(read: Assignment, solution: Mapping[str, Mapping[str, str]]) -> tuple[int, int]:
    """(cells read right, cells in the solution): an unread cell counts as wrong."""
    total = sum(len(cells) for cells in solution.values())
    right = sum(read.get(person, {}).get(attribute) == value
                for person, cells in solution.items() for attribute, value in cells.items())
    return right, total


def outcome_of(read: Assignment, solution: Mapping[str, Mapping[str, str]]) -> str | None:
    """`solved` when every cell is read right, `unsolved` when some cell is read but not all right, None when
    the reply states no cell (an abstention, which a re-ask may repair)."""
    if not read:
        return None
    right, total = cell_accuracy(read, solution)
    return SOLVED if right == total else UNSOLVED
