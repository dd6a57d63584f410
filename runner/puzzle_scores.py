"""Puzzle solving scored per difficulty band (docs/scoring.md, "Puzzles as answers"): of the rows answered
by a puzzle's solution, the share solved exactly (every cell right), with its Wilson interval, and the
mean share of cells right, per model and band. Family-blind: it reads suite rows and result rows only.

A reply that states no cell is an abstention: counted apart (`abstained`), and a cell it leaves unread
counts as wrong in the per-cell accuracy of a reply that states some. Failed calls are `failed`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import pandas as pd

from spec_audits.contract.results_model import ResultRow
from spec_audits.contract.suite_model import SuiteRow
from spec_audits.puzzles.answers import SOLVED, cell_accuracy
from spec_audits.stats.intervals import wilson_one


def solved_table(rows: Sequence[SuiteRow], results: Iterable[ResultRow]) -> pd.DataFrame:
    """One line per answered (item, sample, model) of a solution row: band, family, outcome, cells right."""
    by_id = {row.id: row for row in rows if row.answer_form == "solution"}
    lines: list[dict[str, Any]] = []
    for result in results:
        row = by_id.get(result.item_id)
        if row is None:
            continue
        puzzle = row.puzzle or {}
        right, total = cell_accuracy(result.solution or {}, (row.expect or {})["solution"])
        lines.append({"model": result.model, "band": puzzle.get("difficulty", {}).get("band"),
                      "family": puzzle.get("family"), "item_id": row.id, "sample": result.sample,
                      "failed": result.error is not None, "outcome": result.outcome,
                      "cells_right": right, "cells": total})
    return pd.DataFrame(lines)


def _band(group: pd.DataFrame) -> dict[str, Any]:
    answered = group[~group["failed"] & group["outcome"].notna()]
    n, solved = len(answered), int((answered["outcome"] == SOLVED).sum())
    ci = wilson_one(solved, n)
    return {"items": len(group), "failed": int(group["failed"].sum()),
            "abstained": int((~group["failed"] & group["outcome"].isna()).sum()), "answered": n, "solved": solved,
            "accuracy": solved / n if n else None, "ci_low": ci and ci[0], "ci_high": ci and ci[1],
            "cell_accuracy": float((answered["cells_right"] / answered["cells"]).mean()) if n else None,
            "note": None if n else "no answered item"}


def accuracy_by_band(table: pd.DataFrame, by: Sequence[str] = ("model", "family", "band")) -> pd.DataFrame:
    """Exact-match accuracy (Wilson 95% interval) and mean per-cell accuracy per group of `by`."""
    if table.empty:
        return pd.DataFrame(columns=[*by, "items", "accuracy", "cell_accuracy"])
    out = [{**dict(zip(by, key, strict=True)), **_band(group)}
           for key, group in table.groupby(list(by), sort=True, dropna=False)]
    return pd.DataFrame(out)
