"""A conditional-bias suite's rows checked against its analysis record before anything is scored.

manifest.analysis (record.py) names the two arms, the biases of the matrix and the covariates the matching
and the synthetic control read; a stranger may make them disagree with the rows. Every row's cell must name
its condition, one of the record's arms and biases of the matrix (a shared row has no human bias); every
bank row (one with a human bias) must carry its bank row and every covariate the record lists. The first
row that does not is a located error (`suite.jsonl:LINE: row ID: ...`, `row_contradicts`), never a traceback
or a table scored without its rows.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from spec_audits.families.cognitive_bias.record import BiasRecord
from spec_audits.sdk import SuiteRow, cell_problem


def row_checker(analysis: dict[str, Any]) -> Callable[[SuiteRow], str | None]:
    """What contradicts the (already validated) analysis record in one row (None: nothing), for a scorer that
    streams the rows and refuses the first such row with `row_contradicts`."""
    record = BiasRecord.model_validate(analysis)
    domains = {"condition": None, "arm": record.arms, "target_bias": record.matrix_order,
               "human_bias": [*record.matrix_order, None]}
    covariates = list(dict.fromkeys([*(record.psm_covariates or []), *(record.scm_covariates or [])]))
    return lambda row: cell_problem(row.cell, domains) or _meta_problem(row, covariates)


def _meta_problem(row: SuiteRow, covariates: list[str]) -> str | None:
    meta = row.meta or {}
    if not isinstance(meta.get("metric"), dict):
        return "its meta has no metric parameters"
    if row.cell["human_bias"] is None:
        return None
    found = meta.get("covariates")
    if "bank_row" not in meta or not isinstance(found, dict):
        return "a bank row's meta names no bank row or covariates"
    missing = [name for name in covariates if name not in found]
    if missing:
        return f"its meta has no covariate {missing[0]!r}, which manifest.json's analysis lists"
    return None
