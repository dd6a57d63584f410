"""What scoring refuses before it counts anything: result rows no run of this suite and model wrote.

A row answered by another model than run.json names, or whose recorded outcome is not what its answer
means in the suite (an answer that is not one of the row's tokens, an outcome with no answer, an
outcome another than the answer's), is a ScoreInputError naming the file and line. Every family's
loader goes through `check_result_columns`, vectorised for the million-row files of an influence run.

So is a row that repeats an earlier row's (item, sample), whatever either holds (`refuse_repeats`): spec run never
writes one (a resume rewrites the file without repeats before it appends, and --retry-failed removes the failed rows
first; merge and import write one row each), so a repeat is a file joined or edited by hand, which no rule could
read without guessing which row counts. The message names both rows and `spec merge`, which keeps one row each.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from spec_audits.contract.reader import (
    RESULTS_FILE,
    RUN_FILE,
    ResultsFile,
    Suite,
    iter_numbered_results,
    read_results_file,
    read_run,
)
from spec_audits.contract.results_model import ResultRow, RunInfo
from spec_audits.runner.score_input import ScoreInputError

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


REPEAT_FIX = ("a results file holds one row per (item, sample), and spec run never writes two; if the file joins "
              "a retry or shards by hand, `spec merge RUN --out NEW` keeps one row of each (the last answer; an "
              "answer beats a failure)")


def read_unique_results(path: Path) -> ResultsFile:
    """The rows of results.jsonl (`read_results_file`), one at most per (item, sample): a repeat is refused."""
    found = read_results_file(path)
    items, _ = pd.factorize(pd.Series([row.item_id for row in found.rows], dtype=object))
    samples = np.array([row.sample for row in found.rows], dtype=np.int64)
    refuse_repeats(path, repeated(sample_keys(items, samples)), np.array(found.lines, dtype=np.int64))
    return found


def scored_results(path: Path) -> list[ResultRow]:
    """The rows of results.jsonl as a family's scorer reads them (the SDK's `read_results`): a repeat is refused."""
    return read_unique_results(path).rows


def sample_keys(items: np.ndarray, samples: np.ndarray) -> np.ndarray:
    """A key per row for its (item, sample), from its item's code (a suite position) and its sample, taken by rank:
    a stranger's sample of 2**62 cannot overflow the key and make two rows' keys one."""
    _, rank = np.unique(samples, return_inverse=True)
    return items.astype(np.int64) * (int(rank.max(initial=0)) + 1) + rank.ravel()


def repeated(values: np.ndarray) -> np.ndarray:
    """Whether each value repeats an earlier one (pandas' duplicated, by a sort instead of a hash table)."""
    order = np.argsort(values, kind="stable")
    again = np.zeros(len(values), dtype=bool)
    again[order[1:][values[order[1:]] == values[order[:-1]]]] = True
    return again


def refuse_repeats(path: Path, again: np.ndarray, lines: np.ndarray) -> None:
    """Refuse the first row flagged in `again` (it repeats an earlier row's (item, sample); `lines`: the rows'
    line numbers), naming both rows."""
    if again.any():
        raise repeat_error(path, int(lines[int(np.flatnonzero(again)[0])]))


def repeat_error(path: Path, line: int) -> ScoreInputError:
    """The error for row `line` of results.jsonl `path`, the first to repeat an earlier row's (item, sample). The
    file is read again to find that row: a scorer keeps no row's id, and this is the path of an error only."""
    later = next(row for _, number, row in iter_numbered_results(path) if number == line)
    earlier, first = next((number, row) for _, number, row in iter_numbered_results(path)
                          if (row.item_id, row.sample) == (later.item_id, later.sample))
    kinds = " then ".join("failed" if row.error is not None else "answered" for row in (first, later))
    return ScoreInputError(path, f"item {later.item_id!r} sample {later.sample} again: row {earlier} holds it "
                           f"already ({kinds}); {REPEAT_FIX}", row=line, column="sample")
