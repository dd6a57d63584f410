"""What scoring refuses before it counts anything: result rows no run of this suite and model wrote.

A row answered by another model than run.json names, or whose recorded outcome is not what its answer
means in the suite (an answer that is not one of the row's tokens, an outcome with no answer, an
outcome another than the answer's), is a ScoreInputError naming the file and line. Every family's
loader goes through `check_result_columns`, vectorised for the million-row files of an influence run.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from runner.contract import RESULTS_FILE, RUN_FILE, Suite, read_results_file, read_run
from runner.results_model import ResultRow, RunInfo
from runner.score_input import ScoreInputError

_UNCHECKED = -9  # an item the suite lacks: the family's loader names it
_NOT_A_TOKEN = -2  # an answer that is not one of the row's tokens
_UNSEEN = -3  # the answer's meaning, which no row records as its outcome


def read_checked_run(run_dir: Path) -> tuple[RunInfo, Suite, list[ResultRow]]:
    """run.json, its suite and the rows of results.jsonl, every row checked against both."""
    info, suite = read_run(run_dir)
    path = run_dir / RESULTS_FILE
    found = read_results_file(path)
    rows = found.rows
    frame = pd.DataFrame({"row": found.lines, "item_id": [r.item_id for r in rows], "model": [r.model for r in rows],
                          "answer": [r.answer for r in rows], "outcome": [r.outcome for r in rows]})
    check_result_columns(path, info, suite, frame)
    return info, suite, rows


def check_result_columns(path: Path, info: RunInfo, suite: Suite, frame: pd.DataFrame) -> None:
    """Refuse the first row (columns row, item_id, model, answer, outcome) of another model, or whose
    outcome contradicts its answer."""
    model = frame["model"].to_numpy(dtype=object)
    other = model != info.model
    if other.any():
        first = int(np.flatnonzero(other)[0])
        raise ScoreInputError(path, f"answered by {model[first]!r}, but {RUN_FILE} says the run is of "
                              f"{info.model!r}", row=_line(frame, first), column="model")
    ids, id_names = pd.factorize(frame["item_id"])
    answers, answer_names = pd.factorize(frame["answer"])  # -1: no answer
    outcomes, outcome_names = pd.factorize(frame["outcome"])  # -1: no outcome
    pair = ids.astype(np.int64) * (len(answer_names) + 1) + (answers + 1)
    pairs, inverse = np.unique(pair, return_inverse=True)
    meanings = {row.id: row.answers for row in suite.rows}
    expected = np.array([_expected(meanings.get(id_names[p // (len(answer_names) + 1)]),
                                   p % (len(answer_names) + 1) - 1, answer_names, outcome_names) for p in pairs],
                        dtype=np.int64)[inverse.ravel()]
    bad = (expected != _UNCHECKED) & (expected != outcomes)
    if bad.any():
        first = int(np.flatnonzero(bad)[0])
        answer = None if answers[first] < 0 else answer_names[answers[first]]
        outcome = None if outcomes[first] < 0 else outcome_names[outcomes[first]]
        meaning = meanings[id_names[ids[first]]]
        raise ScoreInputError(path, _contradiction(answer, outcome, meaning), row=_line(frame, first),
                              column="answer" if expected[first] == _NOT_A_TOKEN else "outcome")


def _expected(meaning: dict[str, str] | None, answer: int, answer_names: pd.Index, outcome_names: pd.Index) -> int:
    """The outcome code an answer code must come with."""
    if meaning is None:
        return _UNCHECKED
    if answer < 0:
        return -1
    token = answer_names[answer]
    if token not in meaning:
        return _NOT_A_TOKEN
    found = outcome_names.get_indexer([meaning[token]])[0]
    return int(found) if found >= 0 else _UNSEEN


def _contradiction(answer: str | None, outcome: str | None, meaning: dict[str, str]) -> str:
    if answer is None:
        return f"outcome {outcome!r} recorded without an answer"
    if answer not in meaning:
        return f"answer {answer!r} is not one of the item's answers ({', '.join(map(repr, meaning))})"
    return f"outcome {outcome!r} contradicts answer {answer!r}, which means {meaning[answer]!r}"


def _line(frame: pd.DataFrame, index: int) -> int:
    return int(frame["row"].iloc[index])
