"""What an effects design's compile writes into manifest.analysis (expand.py, with prepare.py's crossing
record), as a closed record: `spec score` reads a suite's analysis through it
(spec_audits/contract/analysis_record.py), so a stranger's manifest cannot hand the scorer a reference level
its factor lacks or an interaction over a factor it does not cross."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, Field, model_validator

from spec_audits.families.effects.check import ANALYSIS_DOMAINS, SCENARIO_EFFECTS
from spec_audits.families.effects.design import BASELINE, SCORER_COLUMNS, AnswerKind, scorer_column
from spec_audits.sdk import CLOSED, AnalysisRecord, domain, listed_twice, one_of, shown

Names = Annotated[list[str], Field(min_length=1)]
Count = Annotated[int, Field(ge=0)]


class AnswerRecord(BaseModel):
    """design.py AnswerForm.record: the answer's kind and its tokens."""

    model_config = CLOSED

    kind: AnswerKind
    tokens: Annotated[list[str], Field(min_length=2)]

    @model_validator(mode="after")
    def _tokens_fit_the_kind(self) -> AnswerRecord:
        if listed_twice(self.tokens):
            raise ValueError(f"answer token {shown(listed_twice(self.tokens)[0])} is listed twice")
        if self.kind == "yesno" and self.tokens != ["yes", "no"]:
            raise ValueError(f"a yesno answer's tokens are yes and no, not {shown(self.tokens)}")
        if self.kind in ("scale", "number") and not all(_whole(token) for token in self.tokens):
            raise ValueError(f"a {self.kind} answer's tokens are whole numbers, not {shown(self.tokens)}")
        return self


def _whole(token: str) -> bool:
    return token.lstrip("-").isdigit() and token.isascii()


class FactorRecord(BaseModel):
    """One crossed factor: its levels in order, the level the others are compared with and, from a manifest
    compiled since they were recorded, each level's text as the spec declares it (the report shows it)."""

    model_config = CLOSED

    name: str
    levels: Names
    reference: str
    texts: dict[str, str] | None = None

    @model_validator(mode="after")
    def _reference_is_a_level(self) -> FactorRecord:
        if scorer_column(self.name):
            raise ValueError(f"factor {shown(self.name)} has the name of a column the scorer keeps "
                             f"({', '.join(SCORER_COLUMNS)}, y_OUTCOME)")
        if listed_twice(self.levels):
            raise ValueError(f"level {shown(listed_twice(self.levels)[0])} of factor {self.name!r} is listed twice")
        if self.reference not in self.levels:
            raise ValueError(f"reference {self.reference!r} is not a level of factor {self.name!r}")
        if self.texts is not None and set(self.texts) != set(self.levels):
            raise ValueError(f"the texts of factor {self.name!r} name {sorted(self.texts)}, not its levels "
                             f"{sorted(self.levels)}")
        return self


class CrossingRecord(BaseModel):
    """prepare.py's record of the crossing and its balance, counted at compile time."""

    model_config = CLOSED

    kind: Literal["full", "fraction"]
    factors: list[str]
    levels: list[Annotated[int, Field(ge=1)]]
    runs: Annotated[int, Field(ge=1)]
    per_level: dict[str, Count]
    per_pair: dict[str, Count]
    seed: int | None = None


class DesignRecord(BaseModel):
    """What one design of a suite has its own: its answer form (compiler/suite_checks.py suite_analysis)."""

    model_config = CLOSED

    answer: AnswerRecord


class EffectsRecord(AnalysisRecord):
    """`analysis effects scenarios random | cluster, alpha X` as compiled, with the design's factors,
    conditions, answer and crossing; for a suite whose designs ask in different answer forms, each design's
    answer under `designs` instead of one `answer`."""

    family: Annotated[str, one_of(("effects",))]
    alpha: Annotated[float, domain(*ANALYSIS_DOMAINS["alpha"])]
    scenario_effect: Annotated[str, one_of(SCENARIO_EFFECTS)]
    answer: AnswerRecord | None = None
    designs: dict[str, DesignRecord] | None = None
    correct: bool
    outcome: str | None = None  # `correct TEMPLATE as NAME`: the target outcome's name, when not `correct`
    conditions: Names
    factors: list[FactorRecord]  # none: a design of conditions only (the baseline and interventions)
    crossing: CrossingRecord
    interactions: list[Annotated[list[str], Field(min_length=2, max_length=2)]]

    @model_validator(mode="after")
    def _factors_agree(self) -> EffectsRecord:
        names = [factor.name for factor in self.factors]
        for what, listed in (("factor", names), ("condition", self.conditions)):
            if listed_twice(listed):
                raise ValueError(f"{what} {shown(listed_twice(listed)[0])} is listed twice")
        if any(first == second for first, second in self.interactions):
            raise ValueError("an interaction pairs a factor with itself")
        if (self.answer is None) == (self.designs is None):
            raise ValueError("the record has an answer, or per design its answer under designs: exactly one")
        if self.designs is not None and len(self.designs) < 2:
            raise ValueError("per-design answers are for a suite of several designs")
        if self.crossing.factors != names:
            raise ValueError(f"the crossing's factors {self.crossing.factors} are not the design's {names}")
        if not names and (len(self.conditions) < 2 or BASELINE not in self.conditions):
            raise ValueError("a design with no factors compares the baseline with an intervention")
        stray = sorted({name for pair in self.interactions for name in pair} - set(names))
        if stray:
            raise ValueError(f"interactions name {', '.join(stray)}, which the design does not cross")
        return self

    def answer_of(self, design: str | None) -> AnswerRecord | None:
        """The answer of the rows of `design` (a row's cell.design): None where the record has none for it."""
        if self.designs is None:
            return self.answer
        found = self.designs.get(design) if design is not None else None
        return found.answer if found is not None else None
