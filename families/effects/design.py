"""The typed input of an effects design: what the expansion takes, whatever front (clauses) built it.

A design crosses factors of any number of levels (each level with its forms), names a reference level per
factor, asks every stimulus under a baseline and named interventions, and reads one answer form. The
checks (check.py) build an EffectsInput from a design's clauses; crossing.py and expand.py never look at
the clauses.
"""

from __future__ import annotations

from typing import Any, Literal

from spec_audits.sdk import CompiledText, Record, Span, field

BASELINE = "baseline"
AnswerKind = Literal["yesno", "options", "scale", "number"]
Position = Literal["system", "prepend", "append"]
CORRECT, INCORRECT = "correct", "incorrect"  # outcomes of a design that names each stimulus's correct answer
SCORER_COLUMNS = ("scenario", "condition", "y", "_y", "count", "sum")
"""Columns the scorer's frames keep beside the factors (score/frame.py, models.py, pipeline.py), with every
`y_<outcome>`: no factor may take one of these names."""


def scorer_column(name: str) -> bool:
    """Whether a factor of this name would collide with a column of the scorer's frames."""
    return name in SCORER_COLUMNS or name.startswith("y_")


def outcomes(name: str) -> tuple[str, str]:
    """The outcomes of a design whose `correct TEMPLATE [as NAME]` names each stimulus's target token: NAME and
    its complement (correct and incorrect; else NAME and not_NAME)."""
    return (CORRECT, INCORRECT) if name == CORRECT else (name, f"not_{name}")


class Level(Record):
    """One level of a factor: its name and the forms templates read (`plural`, `singular`, `a_singular`, ...)."""

    name: str
    forms: dict[str, str]

    def context(self) -> dict[str, str]:
        return {"name": self.name, **self.forms}

    @property
    def text(self) -> str:
        """What a reader sees for the level: its first form as declared (`a25 "25-year-old"`), else its name."""
        return next(iter(self.forms.values()), self.name)


class FactorSpec(Record):
    name: str
    levels: tuple[Level, ...]
    reference: str  # the level every other level is compared with

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(level.name for level in self.levels)


class Crossing(Record):
    """`full`: every combination of levels; `fraction`: `runs` combinations, each level and each pair of levels
    of two factors equally often, drawn by `seed`."""

    kind: Literal["full", "fraction"]
    runs: int | None = None
    seed: int = 0
    span: Span | None = None  # the clause that asked for it, for the error when no such fraction exists


class Condition(Record):
    """The baseline (no text), or a named intervention: an instruction added to every prompt of the condition."""

    name: str
    text: CompiledText | None = None
    position: Position = "append"


class AnswerForm(Record):
    """What the model answers with: its tokens and, by kind, how an answer becomes an outcome value."""

    kind: AnswerKind
    tokens: tuple[str, ...]

    @classmethod
    def yesno(cls) -> AnswerForm:
        return cls("yesno", ("yes", "no"))

    @classmethod
    def scale(cls, low: int, high: int, kind: AnswerKind = "scale") -> AnswerForm:
        return cls(kind, tuple(str(v) for v in range(low, high + 1)))

    @property
    def numeric(self) -> bool:
        return self.kind in ("scale", "number")

    def record(self) -> dict[str, Any]:
        return {"kind": self.kind, "tokens": list(self.tokens)}


class Scenario(Record):
    """One stimulus frame (a data row): its key and the values templates read as `scenario.COLUMN`."""

    key: str
    values: dict[str, Any]


class Analysis(Record):
    """How the scorer models the outcome: declared interactions, the scenario effect, the target outcome."""

    interactions: tuple[tuple[str, str], ...] = ()
    scenario_effect: Literal["random", "cluster"] = "cluster"
    alpha: float = 0.05

    def record(self) -> dict[str, Any]:
        return {"interactions": [list(pair) for pair in self.interactions], "scenario_effect": self.scenario_effect,
                "alpha": self.alpha}


class EffectsInput(Record):
    """An effects design, resolved: everything the crossing and the expansion need."""

    name: str
    span: Span
    factors: tuple[FactorSpec, ...]
    crossing: Crossing
    conditions: tuple[Condition, ...]
    answer: AnswerForm
    scenarios: tuple[Scenario, ...]
    prompt: CompiledText
    system: CompiledText | None = None
    correct: CompiledText | None = None  # renders each stimulus's target token: outcomes become outcomes(outcome)
    outcome: str = CORRECT  # `correct TEMPLATE as NAME`: the target outcome's name
    samples: int = 1
    mode: str = "sample"
    decode: dict[str, Any] = field(default_factory=dict)
    trials: tuple[int, int] | None = None  # `trials N per cell [seed S]`: N trials of every cell, drawn by S
    analysis: Analysis = Analysis()


def template_names(factors: tuple[FactorSpec, ...]) -> set[str]:
    """The names an effects design's templates may read."""
    return {"scenario", "condition", *(factor.name for factor in factors)}
