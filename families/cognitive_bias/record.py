"""What a conditional-bias design's compile writes into manifest.analysis (check.py `_analysis`, with the
design's arms and protocol), as a closed record: `spec score` reads a suite's analysis through it
(spec_audits/contract/analysis_record.py)."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field, model_validator

from spec_audits.families.cognitive_bias.check import ANALYSIS, DID_VARIANTS, PROTOCOLS
from spec_audits.sdk import AnalysisRecord, listed_twice, one_of, shown

Names = Annotated[list[str], Field(min_length=1)]


class BiasRecord(AnalysisRecord):
    """`analysis bias_decomposition params C, target C, human C, matrix_order "A|B", ...` as compiled."""

    family: Annotated[str, one_of((ANALYSIS,))]
    params: str
    target: str
    human: str
    did: Annotated[str, one_of(DID_VARIANTS)]
    matrix_order: Names
    psm_covariates: list[str] | None = None
    scm_covariates: list[str] | None = None
    arms: Annotated[list[str], Field(min_length=2, max_length=2)]
    protocol: Annotated[str, one_of(tuple(PROTOCOLS))]

    @model_validator(mode="after")
    def _each_name_once(self) -> BiasRecord:
        for what, names in (("arm", self.arms), ("bias of matrix_order", self.matrix_order),
                            ("psm covariate", self.psm_covariates or []),
                            ("scm covariate", self.scm_covariates or [])):
            if listed_twice(names):
                raise ValueError(f"{what} {shown(listed_twice(names)[0])} is listed twice")
        return self
