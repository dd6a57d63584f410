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

from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import pandas as pd

from spec_audits.families.effects.design import CORRECT
from spec_audits.sdk import PER_DESIGN

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
        return [replace(self, frame=_kept(self.frame[self.frame[DESIGN] == design]), model=f"{self.model} [{design}]",
                        analysis=of_design(self.analysis, design), design=design,
                        abstained=counts.get(design, (0, 0))[0], failed=counts.get(design, (0, 0))[1], left_out=())
                for design in designs]


def _kept(frame: pd.DataFrame) -> pd.DataFrame:
    """A block's frame with only the categories its rows hold, as if it had been read alone."""
    return frame.assign(**{name: frame[name].cat.remove_unused_categories() for name in frame.columns
                           if isinstance(frame[name].dtype, pd.CategoricalDtype)})


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


def column(target: str | None) -> str:
    return "y" if target is None else f"y_{target}"


def values(outcome: str | None, logprobs: dict[str, float] | None, answers: dict[str, str],
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
