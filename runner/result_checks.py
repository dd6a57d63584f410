"""What scoring refuses before it counts anything: result rows no run of this suite and model wrote.

A row answered by another model than run.json names, or whose recorded outcome is not what its answer
means in the suite (an answer that is not one of the row's tokens, an outcome with no answer, an
outcome another than the answer's), is a ScoreInputError naming the file and line. Every family's
loader goes through `check_result_columns`, vectorised for the million-row files of an influence run.

So is a row that repeats an earlier row's (item, sample) (`read_checked_run` reads through
runner/score_input.read_unique_results, which says why).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from spec_audits.contract.reader import RESULTS_FILE, RUN_FILE, Suite, read_run
from spec_audits.contract.results_model import ResultRow, RunInfo
from spec_audits.runner.score_input import ScoreInputError, read_unique_results

_UNCHECKED = -9  # an item the suite lacks: the family's loader names it
_NOT_A_TOKEN = -2  # an answer that is not one of the row's tokens
_UNSEEN = -3  # the answer's meaning, which no row records as its outcome


def read_checked_run(run_dir: Path) -> tuple[RunInfo, Suite, list[ResultRow]]:
    """run.json, its suite and the rows of results.jsonl, every row checked against both."""
    info, suite = read_run(run_dir)
    path = run_dir / RESULTS_FILE
    found = read_unique_results(path)
    rows = found.rows
    frame = pd.DataFrame({"row": found.lines, "item_id": [r.item_id for r in rows], "model": [r.model for r in rows],
                          "answer": [r.answer for r in rows], "outcome": [r.outcome for r in rows]})
    by_id = {row.id: row.answers for row in suite.rows}
    check_result_columns(path, info, lambda names: [by_id.get(name) for name in names], frame)
    return info, suite, rows


@dataclass(frozen=True)
class CodedMeanings:
    """What a Meanings function may give instead of a mapping per id, for a million ids: a code per id into the
    distinct mappings (-1: no such row)."""

    codes: np.ndarray
    mappings: list[dict[str, str]]


Meanings = Callable[[pd.Index], "Sequence[dict[str, str] | None] | CodedMeanings"]
"""The suite rows' answers (token -> meaning) of a run's distinct item ids, in their order (None: no such row)."""


def check_result_columns(path: Path, info: RunInfo, meanings: Meanings, frame: pd.DataFrame) -> None:
    """Refuse the first row (columns row, item_id, model, answer, outcome) of another model, or whose
    outcome contradicts its answer. Each distinct answers mapping is checked once per answer, so that a
    million items sharing a few mappings cost a few look-ups."""
    models, model_names = _codes(frame["model"])
    other = [code for code, name in enumerate(model_names) if name != info.model]
    if other or (models < 0).any():
        first = int(np.flatnonzero(np.isin(models, [*other, -1]))[0])
        found = frame["model"].iloc[first]
        who = f"answered by {found!r}" if isinstance(found, str) else "names no model"
        raise ScoreInputError(path, f"{who}, but {RUN_FILE} says the run is of {info.model!r}",
                              row=_line(frame, first), column="model")
    ids, id_names = _codes(frame["item_id"])
    found = meanings(id_names)
    kinds, mappings = (found.codes, found.mappings) if isinstance(found, CodedMeanings) else _mapping_codes(found)
    answers, answer_names = _codes(frame["answer"])  # -1: no answer
    outcomes, outcome_names = _codes(frame["outcome"])  # -1: no outcome
    outcome_codes = {name: code for code, name in enumerate(outcome_names)}
    width = len(answer_names) + 1
    row_kinds = np.where(ids >= 0, kinds[ids], -1)
    # hashed, not sorted: np.unique's sort took five arrays of a row's width, 40 bytes a row
    inverse, pairs = pd.factorize(row_kinds.astype(np.int64) * width + (answers + 1))
    expected = np.array([_expected(mappings[pair // width] if pair >= 0 else None, pair % width - 1, answer_names,
                                   outcome_codes) for pair in pairs.tolist()], dtype=np.int64)[inverse]
    bad = (expected != _UNCHECKED) & (expected != outcomes)
    if bad.any():
        first = int(np.flatnonzero(bad)[0])
        answer = None if answers[first] < 0 else answer_names[answers[first]]
        outcome = None if outcomes[first] < 0 else outcome_names[outcomes[first]]
        column = "answer" if expected[first] == _NOT_A_TOKEN else "outcome"
        raise ScoreInputError(path, _contradiction(answer, outcome, mappings[row_kinds[first]]),
                              row=_line(frame, first), column=column)


def _mapping_codes(found: Sequence[dict[str, str] | None]) -> tuple[np.ndarray, list[dict[str, str]]]:
    """A code per id for its answers mapping (-1: none; equal mappings held as one object share a code) and the
    distinct mappings."""
    code: dict[int, int] = {}
    mappings: list[dict[str, str]] = []
    kinds = np.full(len(found), -1, dtype=np.int64)
    for index, mapping in enumerate(found):
        if mapping is not None:
            kinds[index] = code.setdefault(id(mapping), len(code))
            if kinds[index] == len(mappings):
                mappings.append(mapping)
    return kinds, mappings


def _codes(column: pd.Series) -> tuple[np.ndarray, pd.Index]:
    """A column as integer codes (-1 for missing) and the values they stand for; a categorical's own."""
    if isinstance(column.dtype, pd.CategoricalDtype):
        return column.cat.codes.to_numpy(), column.cat.categories
    codes, names = pd.factorize(column)
    return codes, pd.Index(names)


def _expected(meaning: dict[str, str] | None, answer: int, answer_names: pd.Index,
              outcome_codes: dict[str, int]) -> int:
    """The outcome code an answer code must come with."""
    if meaning is None:
        return _UNCHECKED
    if answer < 0:
        return -1
    token = answer_names[answer]
    if token not in meaning:
        return _NOT_A_TOKEN
    return outcome_codes.get(meaning[token], _UNSEEN)


def _contradiction(answer: str | None, outcome: str | None, meaning: dict[str, str]) -> str:
    if answer is None:
        return f"outcome {outcome!r} recorded without an answer"
    if answer not in meaning:
        return f"answer {answer!r} is not one of the item's answers ({', '.join(map(repr, meaning))})"
    return f"outcome {outcome!r} contradicts answer {answer!r}, which means {meaning[answer]!r}"


def _line(frame: pd.DataFrame, index: int) -> int:
    return int(frame["row"].iloc[index])

