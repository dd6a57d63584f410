"""An effects suite's rows checked against its analysis record before anything is scored.

manifest.analysis (record.py) says which factors, levels, conditions and answer the rows carry; a stranger
may make the two disagree. Every row's cell must name its scenario, a condition of the record and a level
of every factor; its answers must be the record's tokens, meaning themselves, or (a design that names the
correct answer) correct for one token and incorrect for the others. The scorer (score/read.py) asks each row as
it streams; the first that does not is a located error (`suite.jsonl:LINE: row ID: ...`), never a traceback or a
mean of 0.0.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from spec_audits.families.effects.design import CORRECT, outcomes
from spec_audits.families.effects.record import EffectsRecord
from spec_audits.sdk import SuiteRow, cell_problem, shown, tokens_problem


def row_checker(analysis: dict[str, Any]) -> Callable[[SuiteRow], str | None]:
    """What contradicts the record in one row (None: nothing), for a scorer that streams the rows."""
    record = EffectsRecord.model_validate(analysis)
    domains = {"condition": record.conditions, **{f.name: f.levels for f in record.factors}}
    named = outcomes(record.outcome or CORRECT)
    return lambda row: _cell_problem(row, domains) or _answers_problem(row, record, named)


def _cell_problem(row: SuiteRow, domains: dict[str, list[str]]) -> str | None:
    if "scenario" not in row.cell:
        return "its cell names no scenario"
    return cell_problem(row.cell, domains)


def _answers_problem(row: SuiteRow, record: EffectsRecord, named: tuple[str, str]) -> str | None:
    design = row.cell.get("design")
    answer = record.answer_of(None if design is None else str(design))
    if answer is None:
        naming = "no design" if design is None else f"design {shown(design)}"
        listed = ", ".join(record.designs or {})
        return f"its cell names {naming}, but manifest.json's analysis gives answers to {listed}"
    correct = record.correct
    wrong = tokens_problem(row.answers, set(answer.tokens))
    if wrong is not None:
        return wrong
    meanings = list(row.answers.values())
    if not correct and any(token != meaning for token, meaning in row.answers.items()):
        return f"its answers mean {shown(row.answers)}, but manifest.json's analysis says each token means itself"
    hit, miss = named
    if correct and (meanings.count(hit) != 1 or set(meanings) - {hit, miss}):
        return (f"its answers mean {shown(row.answers)}, but manifest.json's analysis says one token is "
                f"{hit} and the others {miss}")
    return None
