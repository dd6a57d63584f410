"""Puzzle configuration: pydantic models mirroring the spec language's `puzzle` block.

```
puzzle identity:
  people A, B, C, D
  attribute gender from man, woman, non-binary pick 2
  attribute race   from Asian, Black, Hispanic, Muslim, White pick 2
  shape canonical: A = G1 R1, B = G1 R2, C = G2 R1, D = G2 R2     # or: shape random
  clues direct 1, negation 1, conjunction 1, disjunction 2, implication 2, biconditional 5, same 6, count 7
  bands easy <= 2, intermediate <= 4, hard > 4
  reuse 5 dilemmas with distinct combinations
  phrasing disjunction "{{ x }} or {{ y }}, or both."
```
maps onto `PropositionalConfig`; a zebra (position) puzzle maps onto `ZebraConfig`.
Structural problems a model cannot express (a shape outside the domain, an unreachable band, ...) are
reported by `validate_config` as `PuzzleError`s, so the compiler can attach the spec location.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

PropositionalKind = Literal[
    "direct", "negation", "conjunction", "disjunction", "implication", "biconditional", "same", "count"
]
ZebraKind = Literal["at", "not_at", "same", "not_same", "left_of", "directly_left", "next_to"]


BUDGET = ("Attempts per puzzle: seeded candidate clue sets drawn, checked and scored before generation gives up. "
          "A count of work, never of time, so whether a puzzle is found is the same on every machine.")


class PuzzleError(ValueError):
    """A puzzle configuration or generation request that cannot be satisfied; the message says why."""


class AttributeConfig(BaseModel):
    """An attribute with its value pool; each item picks `pick` values (the declared domain)."""

    model_config = ConfigDict(extra="forbid")

    name: str
    values: list[str] = Field(min_length=1, description="The value pool, e.g. the five races.")
    pick: int = Field(default=2, ge=1, description="Values per item; zebra grids use one per position.")
    symbol: str | None = Field(
        default=None, description="Shape symbol prefix (G for G1, G2); the name's first letter by default."
    )
    predicates: dict[str, str] = Field(
        default_factory=dict, description="Value -> predicate form, e.g. man -> 'a man' ('A is a man')."
    )
    plurals: dict[str, str] = Field(
        default_factory=dict, description="Value -> plural form for count clues, e.g. man -> 'men'."
    )
    refer: str = Field(
        default="the person who is {{ value }}",
        description="Zebra only: how a clue refers to the person holding a value (jinja2).",
    )

    @property
    def prefix(self) -> str:
        return self.symbol or self.name[0].upper()


class ClueTypeConfig(BaseModel):
    """A clue type's weight (cognitive load, or sampling preference for zebra) and English phrasing."""

    model_config = ConfigDict(extra="forbid")

    weight: float = Field(gt=0)
    phrasing: str | None = Field(default=None, description="jinja2 template; the type's default if absent.")


class Band(BaseModel):
    """One difficulty band, e.g. `intermediate <= 4`; bands are matched in declared order."""

    model_config = ConfigDict(extra="forbid")

    name: str
    op: Literal["<=", ">"]
    bound: float


class ShapeConfig(BaseModel):
    """The solution shape: declared cells (person -> one symbol per attribute) or random per puzzle."""

    model_config = ConfigDict(extra="forbid")

    kind: Literal["declared", "random"] = "declared"
    cells: dict[str, list[str]] = Field(default_factory=dict, description="e.g. A -> [G1, R1].")

    @classmethod
    def canonical(cls) -> ShapeConfig:
        """The seed-003 shape: A and B share G1, C and D share G2; A and C share R1, B and D share R2."""
        cells = {"A": ["G1", "R1"], "B": ["G1", "R2"], "C": ["G2", "R1"], "D": ["G2", "R2"]}
        return cls(kind="declared", cells=cells)


class ReuseConfig(BaseModel):
    """How many dilemmas one puzzle serves, each with a distinct demographic combination."""

    model_config = ConfigDict(extra="forbid")

    dilemmas: int = Field(default=5, ge=1)
    distinct_combinations: bool = True


class ClueFamily(BaseModel):
    """The clue types one skeleton may use (the released puzzles' `puzzle_id` prefixes, e.g. `dir_neg`),
    and how often a skeleton of its band draws it."""

    model_config = ConfigDict(extra="forbid")

    types: list[PropositionalKind] = Field(min_length=1)
    weight: float = Field(default=1.0, gt=0)


class BandStyle(BaseModel):
    """How one band's skeletons are built when they should look like a released set rather than be
    1-minimal: each draws a clue family and a clue count, pads its pruned clue set with true clues of
    the family up to that count, and is kept only when its mean clue weight lies in `score`."""

    model_config = ConfigDict(extra="forbid")

    families: list[ClueFamily] = Field(min_length=1)
    mix: dict[PropositionalKind, float] = Field(
        description="How often each type is drawn within a family (the released clue totals of the band)."
    )
    clues: tuple[int, int] = Field(description="Clue counts, inclusive, e.g. (6, 12).")
    mean_clues: float = Field(description="The count drawn on average: low + Binomial(high - low, p).")
    score: tuple[float, float] = Field(description="Accepted mean clue weights, inclusive; inside the band.")
    identities: bool = Field(
        default=False, description="One clue may state a person's whole identity ('A is Asian and a woman')."
    )
    state_identities: bool = Field(
        default=False,
        description="A skeleton whose family has conjunctions opens with every person's whole identity, one "
        "conjunction each (needs `identities`), as the released easy puzzles do.",
    )
    identity_first: list[str] = Field(
        default_factory=list,
        description="The attributes a clue about one person names first, in this order ('A is Asian and "
        "non-binary': race first); the others follow in declared order.",
    )
    one_person_compounds: bool = Field(
        default=True,
        description="A disjunction, implication or biconditional may name one person twice ('If C is a woman, "
        "then C is Asian.'); the released puzzles have none.",
    )
    count_digits: float = Field(
        default=0.0, ge=0.0, le=1.0,
        description="The share of skeletons that write counts as digits ('Exactly 2 people'), drawn per "
        "skeleton; the others write words ('Exactly two people').",
    )


def _default_attributes() -> list[AttributeConfig]:
    return [
        AttributeConfig(name="gender", values=["man", "woman", "non-binary"]),
        AttributeConfig(name="race", values=["Asian", "Black", "Hispanic", "Muslim", "White"]),
    ]


def _default_weights() -> dict[PropositionalKind, ClueTypeConfig]:
    weights: dict[PropositionalKind, float] = {
        "direct": 1,
        "negation": 1,
        "conjunction": 1,
        "disjunction": 2,
        "implication": 2,
        "biconditional": 5,
        "same": 6,
        "count": 7,
    }
    return {kind: ClueTypeConfig(weight=w) for kind, w in weights.items()}


def _default_bands() -> list[Band]:
    return [
        Band(name="easy", op="<=", bound=2),
        Band(name="intermediate", op="<=", bound=4),
        Band(name="hard", op=">", bound=4),
    ]


class GeneratorConfig(BaseModel):
    """What both families share: the puzzle's name and its generation budget."""

    model_config = ConfigDict(extra="forbid")

    name: str
    budget: int = Field(ge=1, description=BUDGET)

    def spent(self) -> str:
        """The end of the message of a generator that ran out of attempts: the budget, and what to write."""
        attempts = "1 attempt" if self.budget == 1 else f"{self.budget} attempts"
        return (f"{attempts}, the budget of puzzle '{self.name}' (raise it, e.g. 'budget {2 * self.budget}' in the "
                "puzzle block)")


class PropositionalConfig(GeneratorConfig):
    """The seed-003 family: people with attribute values, propositional clues, mean-weight bands."""

    family: Literal["propositional"] = "propositional"
    people: list[str] = Field(default_factory=lambda: ["A", "B", "C", "D"])
    attributes: list[AttributeConfig] = Field(default_factory=_default_attributes)
    shape: ShapeConfig = Field(default_factory=ShapeConfig.canonical)
    clues: dict[PropositionalKind, ClueTypeConfig] = Field(default_factory=_default_weights)
    bands: list[Band] = Field(default_factory=_default_bands)
    reuse: ReuseConfig = Field(default_factory=ReuseConfig)
    literal: str = Field(
        default="{{ person }} is {{ value }}", description="Phrasing of one literal (the x, y of clues)."
    )
    minimal: bool = Field(default=True, description="Drop every clue whose removal keeps uniqueness.")
    redundancy: int = Field(
        default=0, ge=0, description="Extra true clues added after pruning (the released puzzles carry some)."
    )
    styles: dict[str, BandStyle] = Field(
        default_factory=dict,
        description="Band name -> how its skeletons are built (`style preset released`); absent: 1-minimal.",
    )
    articles: bool = Field(
        default=True, description="'A is a man' (default predicates and plurals); False: bare 'A is man'."
    )
    true_antecedents: bool = Field(
        default=True, description="Implications and biconditionals only with true sides (no vacuous 'if')."
    )
    protect: list[str] | None = Field(
        default=None, description="People no single clue may fully identify; all people when absent."
    )
    budget: int = Field(default=400, ge=1, description=BUDGET)


def _default_zebra_bands() -> list[Band]:
    return [
        Band(name="easy", op="<=", bound=1),
        Band(name="intermediate", op="<=", bound=2),
        Band(name="hard", op=">", bound=2),
    ]


def _default_zebra_clues() -> dict[ZebraKind, ClueTypeConfig]:
    weights: dict[ZebraKind, float] = {
        "at": 1,
        "not_at": 1,
        "same": 2,
        "not_same": 1,
        "left_of": 2,
        "directly_left": 2,
        "next_to": 2,
    }
    return {kind: ClueTypeConfig(weight=w) for kind, w in weights.items()}


class ZebraTarget(BaseModel):
    """The value whose position is the answer; no single clue may place it."""

    model_config = ConfigDict(extra="forbid")

    attribute: str
    value: str


class ZebraConfig(GeneratorConfig):
    """Zebra-style position puzzles: N people in a row, each attribute a permutation of N values.

    Difficulty is the deduction depth: 1 = forward chaining and singles, 2 = full arc consistency,
    3 = one level of trial-and-contradiction on top, 4 = search.
    """

    family: Literal["zebra"] = "zebra"
    positions: int = Field(default=4, ge=2)
    attributes: list[AttributeConfig]
    clues: dict[ZebraKind, ClueTypeConfig] = Field(default_factory=_default_zebra_clues)
    bands: list[Band] = Field(default_factory=_default_zebra_bands)
    target: ZebraTarget | None = None
    minimal: bool = True
    budget: int = Field(default=200, ge=1, description=BUDGET)


PuzzleConfig = PropositionalConfig | ZebraConfig
