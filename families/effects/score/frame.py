"""A run of an effects suite as one frame: a row per answered result, its cell (scenario, condition, every
factor) and its outcome value `y`.

What `y` is depends on the answer form and the mode (docs/scoring.md, "Effects designs"):
* a binary target (yes of yes/no; correct of a design that names the correct token; one option of N):
  sampled, 1 when the answer is the target and 0 otherwise; in logprob mode, P(target) renormalised over
  the valid tokens (the runner's reading).
* a scale or a number: the value answered; in logprob mode the expected value over the valid tokens.
Abstentions and failed calls carry no outcome: they are counted, never scored.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from spec_audits.families.effects.design import CORRECT
from spec_audits.families.effects.rows import check_rows
from spec_audits.families.effects.score import positions
from spec_audits.sdk import PER_DESIGN, ScoreInputError, read_checked_run

DESIGN = "_design"  # the frame's column of each answer's design (cell.design), apart from any factor's name


@dataclass(frozen=True)
class Loaded:
    """One run (or one design's block of it): its frame, the suite's analysis record, the run's mode, the model
    (labelled `MODEL [DESIGN]` for a block of a suite of several designs), and what was left out."""

    frame: pd.DataFrame
    analysis: dict[str, Any]
    mode: str
    model: str
    abstained: int
    failed: int
    moved: str | None = None  # the meaning whose display slot varies (positions.py), None with one order
    left_out: tuple[tuple[str | None, int, int], ...] = ()  # per design: (design, abstained, failed)
    design: str | None = None  # a block's design

    def blocks(self) -> list[Loaded]:
        """The run itself, or, where its suite has several designs (cell.design), one labelled block per
        design: designs are scored apart, never pooled."""
        designs = sorted(set(self.frame[DESIGN].dropna()) | {d for d, _, _ in self.left_out if d is not None})
        if not designs:
            return [self]
        counts = {design: (abstained, failed) for design, abstained, failed in self.left_out}
        return [replace(self, frame=self.frame[self.frame[DESIGN] == design], model=f"{self.model} [{design}]",
                        analysis=of_design(self.analysis, design), design=design,
                        abstained=counts.get(design, (0, 0))[0], failed=counts.get(design, (0, 0))[1], left_out=())
                for design in designs]


def of_design(analysis: dict[str, Any], design: str | None) -> dict[str, Any]:
    """The analysis of one design's rows: a record with answers per design (record.py) narrowed to the
    design's answer; any other record as it is."""
    if PER_DESIGN not in analysis:
        return analysis
    own = analysis[PER_DESIGN][design]
    return {**{key: value for key, value in analysis.items() if key != PER_DESIGN}, **own}


def all_targets(analysis: dict[str, Any]) -> list[str | None]:
    """The targets of every design of the suite, each once."""
    designs = list(analysis[PER_DESIGN]) if PER_DESIGN in analysis else [None]
    return list(dict.fromkeys(t for d in designs for t in targets(of_design(analysis, d))))


def targets(analysis: dict[str, Any]) -> list[str | None]:
    """The outcomes scored as probabilities (None: the numeric value of a scale or number)."""
    kind, tokens = analysis["answer"]["kind"], analysis["answer"]["tokens"]
    if analysis.get("correct"):
        return [str(analysis.get("outcome", CORRECT))]
    if kind == "yesno":
        return ["yes"]
    if kind == "options":
        return list(tokens)
    return [None]


def load(run_dir: Path) -> Loaded:
    """Read and check a run; one frame row per answered result, with columns y_<target> (or y)."""
    info, suite, rows = read_checked_run(run_dir)
    analysis = suite.manifest.analysis or {}
    if analysis.get("family") != "effects":
        raise ScoreInputError(run_dir, "not a run of an effects suite")
    check_rows(analysis, suite)  # the record and the rows agree: every cell key and answer the scorer reads
    by_id = {row.id: row for row in suite.rows}
    moved = positions.moved_meaning(suite.rows)
    factors = [f["name"] for f in analysis["factors"]]
    records: list[dict[str, Any]] = []
    abstained: Counter[str | None] = Counter()
    failed: Counter[str | None] = Counter()
    for result in rows:
        row = by_id[result.item_id]
        cell, answers = row.cell, row.answers
        design = cell.get("design") if "design" not in factors else None  # a factor may be named design
        if result.error is not None:
            failed[None if design is None else str(design)] += 1
            continue
        wanted = targets(of_design(analysis, None if design is None else str(design)))
        values = _values(result.outcome, result.logprobs, answers, wanted, info.mode)
        if values is None:
            abstained[None if design is None else str(design)] += 1
            continue
        records.append({"scenario": cell["scenario"], "condition": cell["condition"], DESIGN: design,
                        **{f: cell[f] for f in factors}, **values,
                        **positions.columns(row, result.answer, result.logprobs if info.mode == "logprob" else None,
                                            moved)})
    placed = positions.COLUMNS if moved is not None else []
    frame = pd.DataFrame.from_records(records, columns=["scenario", "condition", DESIGN, *factors,
                                                        *map(column, all_targets(analysis)), *placed])
    left_out = tuple((d, abstained[d], failed[d]) for d in sorted({*abstained, *failed}, key=str))
    return Loaded(frame, analysis, info.mode, info.model, sum(abstained.values()), sum(failed.values()), moved,
                  left_out)


def column(target: str | None) -> str:
    return "y" if target is None else f"y_{target}"


def _values(outcome: str | None, logprobs: dict[str, float] | None, answers: dict[str, str],
            wanted: list[str | None], mode: str) -> dict[str, float] | None:
    if mode == "logprob":
        if not logprobs:
            return None
        mass = {answers[token]: 0.0 for token in logprobs}
        for token, p in logprobs.items():
            mass[answers[token]] += p
        if wanted == [None]:
            return {"y": float(sum(float(value) * p for value, p in mass.items()))}
        return {column(t): mass.get(t, 0.0) for t in wanted if t is not None}
    if outcome is None:
        return None
    if wanted == [None]:
        return {"y": float(outcome)}
    return {column(t): float(outcome == t) for t in wanted if t is not None}


def values_array(frame: pd.DataFrame, target: str | None) -> np.ndarray:
    return frame[column(target)].to_numpy(dtype=float)
