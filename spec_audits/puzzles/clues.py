"""The clue AST of both puzzle families: JSON form, truth on a solution, and value relabelling.

A solution maps each person (a letter, or a position "1".."N" for zebra grids) to its attribute values.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from spec_audits.base.records import Record, replaced

Solution = Mapping[str, Mapping[str, str]]
Relabel = Callable[[str, str], str]  # (attribute, value) -> new value


class Lit(Record):
    """`person` has `value` for `attribute`."""

    person: str
    attribute: str
    value: str

    def holds(self, solution: Solution) -> bool:
        return solution[self.person][self.attribute] == self.value


class Unary(Record):
    """direct (the literal) or negation (its negation)."""

    type: str
    lit: Lit

    def holds(self, solution: Solution) -> bool:
        return self.lit.holds(solution) == (self.type == "direct")


BINARY_TRUTH: dict[str, Callable[[bool, bool], bool]] = {
    "conjunction": lambda x, y: x and y,
    "disjunction": lambda x, y: x or y,
    "implication": lambda x, y: (not x) or y,
    "biconditional": lambda x, y: x == y,
}


class Binary(Record):
    """A connective over two literals; disjunction is inclusive ("or both")."""

    type: str
    left: Lit
    right: Lit

    def holds(self, solution: Solution) -> bool:
        return BINARY_TRUTH[self.type](self.left.holds(solution), self.right.holds(solution))


class Same(Record):
    """Two people have the same value of an attribute."""

    people: tuple[str, str]
    attribute: str
    type: str = "same"

    def holds(self, solution: Solution) -> bool:
        p, q = self.people
        return solution[p][self.attribute] == solution[q][self.attribute]


class Count(Record):
    """Exactly n people have the value."""

    attribute: str
    value: str
    n: int
    type: str = "count"

    def holds(self, solution: Solution) -> bool:
        return sum(row[self.attribute] == self.value for row in solution.values()) == self.n


class Item(Record):
    """Zebra: the person holding `value` of `attribute`."""

    attribute: str
    value: str

    def position(self, solution: Solution) -> int:
        for index, row in enumerate(solution.values()):
            if row[self.attribute] == self.value:
                return index + 1
        raise KeyError(f"{self.attribute}={self.value} is not in the solution")


class At(Record):
    """Zebra: the item is (at) or is not (not_at) in a 1-based position."""

    type: str
    item: Item
    position: int

    def holds(self, solution: Solution) -> bool:
        return (self.item.position(solution) == self.position) == (self.type == "at")


PAIR_TRUTH: dict[str, Callable[[int, int], bool]] = {
    "same": lambda a, b: a == b,
    "not_same": lambda a, b: a != b,
    "left_of": lambda a, b: a < b,
    "directly_left": lambda a, b: a + 1 == b,
    "next_to": lambda a, b: abs(a - b) == 1,
}


class Pair(Record):
    """Zebra: a positional relation between two items."""

    type: str
    first: Item
    second: Item

    def holds(self, solution: Solution) -> bool:
        return PAIR_TRUTH[self.type](self.first.position(solution), self.second.position(solution))


Clue = Unary | Binary | Same | Count | At | Pair


def to_json(clue: Clue) -> dict[str, Any]:
    """The clue as a plain JSON-able dict (the suite row's structured form)."""
    if isinstance(clue, Unary):
        return {"type": clue.type, **_lit_json(clue.lit)}
    if isinstance(clue, Binary):
        return {"type": clue.type, "left": _lit_json(clue.left), "right": _lit_json(clue.right)}
    if isinstance(clue, Same):
        return {"type": "same", "people": list(clue.people), "attribute": clue.attribute}
    if isinstance(clue, Count):
        return {"type": "count", "attribute": clue.attribute, "value": clue.value, "n": clue.n}
    if isinstance(clue, At):
        return {"type": clue.type, "item": _item_json(clue.item), "position": clue.position}
    return {"type": clue.type, "first": _item_json(clue.first), "second": _item_json(clue.second)}


def from_json(data: Mapping[str, Any]) -> Clue:
    """Inverse of `to_json`; raises KeyError or ValueError on a malformed clue."""
    kind = data["type"]
    if kind in ("direct", "negation"):
        return Unary(kind, Lit(data["person"], data["attribute"], data["value"]))
    if kind in BINARY_TRUTH:
        return Binary(kind, Lit(**data["left"]), Lit(**data["right"]))
    if kind == "same" and "people" in data:
        p, q = data["people"]
        return Same((p, q), data["attribute"])
    if kind == "count":
        return Count(data["attribute"], data["value"], int(data["n"]))
    if kind in ("at", "not_at"):
        return At(kind, Item(**data["item"]), int(data["position"]))
    if kind in PAIR_TRUTH:
        return Pair(kind, Item(**data["first"]), Item(**data["second"]))
    raise ValueError(f"unknown clue type {kind!r}")


def relabel(clue: Clue, new: Relabel) -> Clue:
    """The clue with every attribute value replaced by `new(attribute, value)`."""
    if isinstance(clue, Unary):
        return replaced(clue, lit=_relabel_lit(clue.lit, new))
    if isinstance(clue, Binary):
        return replaced(clue, left=_relabel_lit(clue.left, new), right=_relabel_lit(clue.right, new))
    if isinstance(clue, Count):
        return replaced(clue, value=new(clue.attribute, clue.value))
    if isinstance(clue, At):
        return replaced(clue, item=_relabel_item(clue.item, new))
    if isinstance(clue, Pair):
        return replaced(clue, first=_relabel_item(clue.first, new), second=_relabel_item(clue.second, new))
    return clue


def _relabel_item(item: Item, new: Relabel) -> Item:
    return replaced(item, value=new(item.attribute, item.value))


def _relabel_lit(lit: Lit, new: Relabel) -> Lit:
    return replaced(lit, value=new(lit.attribute, lit.value))


def _lit_json(lit: Lit) -> dict[str, str]:
    return {"person": lit.person, "attribute": lit.attribute, "value": lit.value}


def _item_json(item: Item) -> dict[str, str]:
    return {"attribute": item.attribute, "value": item.value}
