"""What a cue-visibility design's compile writes into manifest.analysis (check.py `_analysis`, and
expand.py's `puzzle_bands`), as a closed record: `spec score` reads a suite's analysis through it
(spec_audits/contract/analysis_record.py)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, Field

from spec_audits.families.cue.check import ABSTENTION_RATE, ANALYSIS_OPTIONS
from spec_audits.sdk import CLOSED, AnalysisRecord, domain, one_of

Count = Annotated[int, Field(ge=0)]


class BandRecord(BaseModel):
    """One puzzle band's skeletons, as expand.py's band_summary records them (a record, never scored)."""

    model_config = CLOSED

    skeletons: Count
    score_min: float
    score_mean: float
    score_max: float
    clues_min: Count
    clues_mean: float
    clues_max: Count
    redundant: Count
    types: dict[str, Count]
    identity_clues: Count
    # absent in suites compiled before these were counted
    identities_stated: Count | None = None
    one_person_compounds: Count | None = None
    count_digits: Count | None = None


class CueRecord(AnalysisRecord):
    """`analysis cue_visibility restrict ..., parse ..., exclude_abstention RATE` as compiled."""

    family: Literal["cue_visibility"]
    restrict: Annotated[str, one_of(ANALYSIS_OPTIONS["restrict"])] | None = None
    parse: Annotated[str, one_of(ANALYSIS_OPTIONS["parse"])] | None = None
    exclude_abstention: Annotated[float, domain(*ABSTENTION_RATE)] | None = None
    puzzle_bands: dict[str, BandRecord] | None = None
