"""Re-prove a stored puzzle dict (a suite row's `puzzle` field) from scratch."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from spec_audits.contract.suite_model import SuiteRow
from spec_audits.puzzles.bands import band_of
from spec_audits.puzzles.clues import from_json
from spec_audits.puzzles.model import Band, PuzzleError
from spec_audits.puzzles.solve import certifier_for, certify, indexed, shape_of
from spec_audits.puzzles.zebra import depth_of


def reprove(puzzle: Mapping[str, Any], rlimit: int | None = None) -> list[str]:
    """Every problem found with the puzzle; an empty list means it is sound. Each Z3 check may take
    `rlimit` solver steps (None: the compiler's limit, solve.RLIMIT), a count of work, not time.

    Checks: each clue is true of the stored solution; Z3 finds exactly one model, equal to it; no
    single clue gives away a protected identity (or the zebra target's position); the stored
    difficulty band matches the recomputed score; the text has one sentence per clue."""
    try:
        clues, solution = indexed(puzzle)
        problems = [
            f"clue {k} ({_text(puzzle, k)!r}) is false of the stored solution"
            for k, c in enumerate(puzzle["clues"], start=1)
            if not from_json(c).holds(puzzle["solution"])
        ]
        try:
            certify(puzzle, rlimit)
        except PuzzleError as exc:
            problems.append(str(exc))
        problems += _giveaways(puzzle, clues, solution, rlimit)
        problems += _difficulty(puzzle)
    except (PuzzleError, KeyError, TypeError, ValueError) as exc:
        return [f"malformed puzzle: {exc}"]
    if len(puzzle.get("text", [])) != len(puzzle["clues"]):
        problems.append(f"{len(puzzle.get('text', []))} clue sentences for {len(puzzle['clues'])} clues")
    return problems


def reprove_row(row: SuiteRow, rlimit: int | None = None) -> list[str]:
    """Every problem with a suite row's puzzle, and whether its expect.solution is the puzzle's."""
    puzzle = row.puzzle or {}
    problems = reprove(puzzle, rlimit)
    expected = (row.expect or {}).get("solution")
    if expected is not None and expected != puzzle.get("solution"):
        problems.append("expect.solution differs from the puzzle's solution")
    return problems


def _text(puzzle: Mapping[str, Any], number: int) -> str:
    text = puzzle.get("text", [])
    return text[number - 1] if number <= len(text) else f"clue #{number}"


def _giveaways(puzzle: Mapping[str, Any], clues: list[Any], solution: dict[str, dict[str, int]],
               rlimit: int | None) -> list[str]:
    certifier = certifier_for(shape_of(puzzle))
    secrets = [(f"the full identity of {p}", {p: solution[p]}) for p in puzzle.get("protect", [])]
    target = puzzle.get("target")
    if target:
        holder = puzzle["people"][target["position"] - 1]
        index = puzzle["domain"][target["attribute"]].index(target["value"])
        secrets.append(
            (f"the position of {target['attribute']}={target['value']}", {holder: {target["attribute"]: index}})
        )
    try:
        return [
            f"clue {number} ({_text(puzzle, number)!r}) alone gives away {what}"
            for number, clue in enumerate(clues, start=1)
            for what, facts in secrets
            if certifier.entails(clue, facts, rlimit)
        ]
    except PuzzleError as err:  # a check out of solver steps
        return [f"puzzle {puzzle.get('config')!r}: cannot tell what each clue gives away alone: {err}"]


def _difficulty(puzzle: Mapping[str, Any]) -> list[str]:
    stored = puzzle["difficulty"]
    if puzzle["family"] == "zebra":
        score: float = depth_of(puzzle)
    else:
        weights = stored["weights"]
        score = sum(weights[c["type"]] for c in puzzle["clues"]) / len(puzzle["clues"])
    band = band_of([Band(**b) for b in stored["bands"]], score)
    if band != stored["band"] or abs(score - stored["score"]) > 1e-6:
        return [f"difficulty recomputes to {band} (score {score:g}), stored {stored['band']} ({stored['score']:g})"]
    return []
