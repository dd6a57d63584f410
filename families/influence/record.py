"""What an influence design's compile writes into manifest.analysis (check.py `_analysis`), as a closed
record: `spec score` and `spec import` read a suite's analysis through it (spec_audits/contract/analysis_record.py)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, BeforeValidator, Field

from spec_audits.families.influence.check import ANALYSIS_DOMAINS
from spec_audits.sdk import CLOSED, AnalysisRecord, domain, is_number

Scalar = Annotated[str | int | float, domain(lambda v: isinstance(v, str) or is_number(v), "a name or a number")]
"""A spec option's value (a name, a text or a number), for the options the compile takes as written."""


def _option(name: str) -> BeforeValidator:
    return domain(*ANALYSIS_DOMAINS[name])


class AnswerRecord(BaseModel):
    """What the answer tokens name (check.py Answer.record): display labels or fixed meanings."""

    model_config = CLOSED

    kind: Literal["labels", "meanings"]
    tokens: Annotated[list[str], Field(min_length=2, max_length=2)]


class InfluenceRecord(AnalysisRecord):
    """`analysis influence_pairs alpha X, bootstrap N, ...` as compiled, and the answer's record."""

    family: Literal["influence_pairs"] = "influence_pairs"  # a suite that declares none is an influence suite
    alpha: Annotated[float, _option("alpha")] | None = None
    bootstrap: Annotated[int, _option("bootstrap")] | None = None
    fdr: Annotated[str, _option("fdr")] | None = None
    fdr_by: Annotated[str, _option("fdr_by")] | None = None
    benchmark: Scalar | None = None
    exclude: Scalar | None = None
    reasoning: Scalar | None = None
    answer: AnswerRecord | None = None  # absent only in a suite compiled before answers were recorded
