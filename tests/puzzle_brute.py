"""An independent brute-force checker for stored puzzle dicts: enumerate the whole declared domain
with itertools and evaluate the JSON clues with its own semantics (no library code)."""

from __future__ import annotations

from collections.abc import Iterator
from itertools import permutations, product
from typing import Any

Assignment = dict[str, dict[str, str]]


def _lit(a: Assignment, lit: dict[str, str]) -> bool:
    return a[lit["person"]][lit["attribute"]] == lit["value"]


def _position(a: Assignment, item: dict[str, str]) -> int:
    return next(k for k, row in enumerate(a.values(), start=1) if row[item["attribute"]] == item["value"])


def holds(clue: dict[str, Any], a: Assignment) -> bool:
    kind = clue["type"]
    if kind == "direct":
        return _lit(a, clue)
    if kind == "negation":
        return not _lit(a, clue)
    if kind in ("conjunction", "disjunction", "implication", "biconditional"):
        x, y = _lit(a, clue["left"]), _lit(a, clue["right"])
        return {"conjunction": x and y, "disjunction": x or y, "implication": not x or y, "biconditional": x == y}[kind]
    if kind == "same" and "people" in clue:
        p, q = clue["people"]
        return a[p][clue["attribute"]] == a[q][clue["attribute"]]
    if kind == "count":
        return sum(row[clue["attribute"]] == clue["value"] for row in a.values()) == clue["n"]
    if kind in ("at", "not_at"):
        return (_position(a, clue["item"]) == clue["position"]) == (kind == "at")
    x, y = _position(a, clue["first"]), _position(a, clue["second"])
    return {
        "same": x == y,
        "not_same": x != y,
        "left_of": x < y,
        "directly_left": x + 1 == y,
        "next_to": abs(x - y) == 1,
    }[kind]


def assignments(puzzle: dict[str, Any]) -> Iterator[Assignment]:
    """Every assignment of the declared domain."""
    people, domain = puzzle["people"], puzzle["domain"]
    attributes = list(domain)
    if puzzle["family"] == "zebra":
        for orders in product(*(permutations(domain[a]) for a in attributes)):
            yield {p: {a: order[k] for a, order in zip(attributes, orders, strict=True)} for k, p in enumerate(people)}
        return
    slots = [(p, a) for p in people for a in attributes]
    for values in product(*(domain[a] for _, a in slots)):
        grid: Assignment = {p: {} for p in people}
        for (p, a), v in zip(slots, values, strict=True):
            grid[p][a] = v
        yield grid


def models(puzzle: dict[str, Any], clues: list[dict[str, Any]] | None = None) -> list[Assignment]:
    chosen = puzzle["clues"] if clues is None else clues
    return [a for a in assignments(puzzle) if all(holds(c, a) for c in chosen)]


def truth_table(puzzle: dict[str, Any]) -> list[tuple[Assignment, list[bool]]]:
    """Each assignment with the truth of each clue, for minimality and give-away checks in one pass."""
    return [(a, [holds(c, a) for c in puzzle["clues"]]) for a in assignments(puzzle)]


def audit(puzzle: dict[str, Any]) -> list[str]:
    """Independent re-proof: exactly one model equal to the solution, minimal (unless the puzzle records
    redundant clues), no single-clue give-away."""
    table = truth_table(puzzle)
    full = [a for a, truth in table if all(truth)]
    problems = [] if full == [puzzle["solution"]] else [f"{len(full)} models, or not the stored solution"]
    minimal = not puzzle.get("difficulty", {}).get("redundant")  # redundant clues are there on purpose
    for k in range(len(puzzle["clues"])):
        others = [a for a, truth in table if all(t for j, t in enumerate(truth) if j != k)]
        if minimal and len(others) == 1:
            problems.append(f"clue {k + 1} is redundant")
        alone = [a for a, truth in table if truth[k]]
        problems += [f"clue {k + 1} alone identifies {secret}" for secret in _given_away(puzzle, alone)]
    return problems


def _given_away(puzzle: dict[str, Any], alone: list[Assignment]) -> list[str]:
    solution = puzzle["solution"]
    secrets = [p for p in puzzle.get("protect", []) if all(a[p] == solution[p] for a in alone)]
    target = puzzle.get("target")
    if target and all(_position(a, target) == target["position"] for a in alone):
        secrets.append("the target's position")
    return secrets
