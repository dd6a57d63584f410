"""English text of clues and domain statements, from the clue AST via sandboxed jinja2 templates.

Each clue type has a default phrasing; a spec's `phrasing TYPE "..."` replaces it. Templates see:
  literal:           person, attribute, value
  direct, negation:  x (the rendered literal), person, attribute, value
  conjunction, disjunction, implication, biconditional:
                     x, y (rendered literals), same_person, person, value_x, value_y
  same:              p, q, attribute
  count:             n, n_word, value, plural, attribute
  zebra at, not_at:  x (the item's referring phrase), position
  zebra pairs:       x, y (referring phrases)
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache
from typing import Any, TypeVar

from jinja2 import TemplateError

from spec_audits.compiler.sandbox import bounded_render, environment
from spec_audits.puzzles.clues import At, Binary, Clue, Count, Item, Lit, Pair, Same, Unary
from spec_audits.puzzles.model import AttributeConfig, ClueTypeConfig, PuzzleError

Kind = TypeVar("Kind", bound=str)  # a configuration's clue type: its literal names, read by name

PROPOSITIONAL_PHRASINGS = {
    "direct": "{{ x }}.",
    "negation": "{{ person }} is not {{ value }}.",
    "conjunction": (
        "{% if same_person %}{{ person }} is {{ value_x }} and {{ value_y }}{% else %}{{ x }} and {{ y }}{% endif %}."
    ),
    "disjunction": "{{ x }} or {{ y }}, or both.",
    "implication": "If {{ x }}, then {{ y }}.",
    "biconditional": "{{ x }} if and only if {{ y }}.",
    "same": "{{ p }} and {{ q }} have the same {{ attribute }}.",
    "count": (
        "{% if n == 1 %}Exactly one person is {{ value }}."
        "{% else %}Exactly {{ n_word }} people are {{ plural }}.{% endif %}"
    ),
}
ZEBRA_PHRASINGS = {
    "at": "{{ x }} is in position {{ position }}.",
    "not_at": "{{ x }} is not in position {{ position }}.",
    "same": "{{ x }} is {{ y }}.",
    "not_same": "{{ x }} is not {{ y }}.",
    "left_of": "{{ x }} is somewhere to the left of {{ y }}.",
    "directly_left": "{{ x }} is directly left of {{ y }}.",
    "next_to": "{{ x }} and {{ y }} are next to each other.",
}
# Every name a clue phrasing is rendered with, over all clue types (Renderer._context).
PHRASING_NAMES = frozenset({"x", "y", "person", "attribute", "value", "same_person", "value_x", "value_y", "p", "q",
                            "n", "n_word", "plural", "position"})
DEFAULT_PREDICATES = {"man": "a man", "woman": "a woman"}
DEFAULT_PLURALS = {"man": "men", "woman": "women"}
NUMBER_WORDS = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten"]

@lru_cache(maxsize=512)
def _compiled(source: str) -> Any:
    return environment().from_string(source)


def fill(source: str, what: str, **context: Any) -> str:
    """Render one template; any syntax error or unknown variable becomes a PuzzleError naming `what`."""
    try:
        return bounded_render(_compiled(source), context)
    except TemplateError as exc:
        raise PuzzleError(f"phrasing of {what} failed: {exc}") from exc


class Renderer:
    """Renders clues of one puzzle configuration."""

    def __init__(
        self,
        attributes: list[AttributeConfig],
        clue_types: Mapping[Kind, ClueTypeConfig],
        defaults: Mapping[str, str],
        literal: str = "{{ person }} is {{ value }}",
        articles: bool = True,
        digits: bool = False,
    ) -> None:
        self._attributes = {a.name: a for a in attributes}
        self._phrasings: dict[str, str] = {k: (c.phrasing or defaults[k]) for k, c in clue_types.items()}
        self._literal = literal
        self._predicates = DEFAULT_PREDICATES if articles else {}
        self._plurals = DEFAULT_PLURALS if articles else {}
        self._digits = digits

    def clue(self, clue: Clue) -> str:
        """The clue's sentence, first letter capitalised."""
        text = fill(self._phrasings[clue.type], f"clue type {clue.type!r}", **self._context(clue))
        return text[:1].upper() + text[1:]

    def predicate(self, attribute: str, value: str) -> str:
        forms = self._attributes[attribute].predicates
        return forms.get(value, self._predicates.get(value, value))

    def plural(self, attribute: str, value: str) -> str:
        forms = self._attributes[attribute].plurals
        return forms.get(value, self._plurals.get(value, self.predicate(attribute, value)))

    def _context(self, clue: Clue) -> dict[str, Any]:
        if isinstance(clue, Unary):
            lit = clue.lit
            value = self.predicate(lit.attribute, lit.value)
            return {"x": self._lit(lit), "person": lit.person, "attribute": lit.attribute, "value": value}
        if isinstance(clue, Binary):
            return {
                "x": self._lit(clue.left),
                "y": self._lit(clue.right),
                "same_person": clue.left.person == clue.right.person,
                "person": clue.left.person,
                "value_x": self.predicate(clue.left.attribute, clue.left.value),
                "value_y": self.predicate(clue.right.attribute, clue.right.value),
            }
        if isinstance(clue, Same):
            return {"p": clue.people[0], "q": clue.people[1], "attribute": clue.attribute}
        if isinstance(clue, Count):
            word = str(clue.n) if self._digits or clue.n >= len(NUMBER_WORDS) else NUMBER_WORDS[clue.n]
            return {
                "n": clue.n,
                "n_word": word,
                "value": self.predicate(clue.attribute, clue.value),
                "plural": self.plural(clue.attribute, clue.value),
                "attribute": clue.attribute,
            }
        if isinstance(clue, At):
            return {"x": self._refer(clue.item), "position": clue.position}
        assert isinstance(clue, Pair)
        return {"x": self._refer(clue.first), "y": self._refer(clue.second)}

    def _lit(self, lit: Lit) -> str:
        value = self.predicate(lit.attribute, lit.value)
        return fill(self._literal, "literals", person=lit.person, attribute=lit.attribute, value=value)

    def _refer(self, item: Item) -> str:
        template = self._attributes[item.attribute].refer
        value = self.predicate(item.attribute, item.value)
        return fill(template, f"attribute {item.attribute!r}", value=value, attribute=item.attribute)


def join_or(words: list[str]) -> str:
    """'x', 'x or y', 'x, y or z'."""
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " or " + words[-1]


def join_and(words: list[str]) -> str:
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1]


def propositional_domain(people: list[str], domain: Mapping[str, list[str]]) -> str:
    """The statement of the declared domain the puzzle is unique over."""
    parts = [f"exactly one {name} ({join_or(values)})" for name, values in domain.items()]
    return f"Each of {join_and(people)} has {join_and(parts)}."


def zebra_domain(positions: int, domain: Mapping[str, list[str]]) -> str:
    lines = [f"{positions} people stand in a row, in positions 1 (leftmost) to {positions} (rightmost)."]
    for name, values in domain.items():
        lines.append(f"Each {name} belongs to exactly one of them: {join_and(values)}.")
    return " ".join(lines)
