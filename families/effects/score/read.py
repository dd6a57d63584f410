"""An effects run read as columns, each file in one stream (docs/scoring.md, "Effects designs", Memory): of each
suite row its id's hash (spec_audits.runner.run_columns.SuiteIds), the codes of its cell values (scenario,
condition, design, every factor) and of its answer tokens with their meanings, never its messages; of each
answered result the suite row it answers, its outcome values and its position columns, in arrays. The frame is
built from those arrays, each cell column a categorical: tens of bytes a row, never a Python object per row."""

from __future__ import annotations

from array import array
from collections import Counter
from itertools import islice
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from spec_audits.families.effects.rows import row_checker
from spec_audits.families.effects.score import positions
from spec_audits.families.effects.score.frame import DESIGN, Loaded, all_targets, column, of_design, targets, values
from spec_audits.sdk import (
    RESULTS_FILE,
    CodedMeanings,
    Codes,
    ResultCodes,
    ScoreInputError,
    SuiteIds,
    SuiteRow,
    iter_numbered_results,
    read_manifest,
    read_run_info,
    read_suite,
    row_contradicts,
    scan_run,
    suite_dir_of,
)

CHUNK = 4096  # result rows looked up in the suite's ids at a time


class _SuiteColumns:
    """The suite's rows as the scorer needs them, `add`ed as the reader streams them (checked against the record)."""

    def __init__(self, analysis: dict[str, Any]) -> None:
        self.factors = [f["name"] for f in analysis["factors"]]
        self.ids = SuiteIds()
        self.cells = {key: Codes() for key in ("scenario", "condition", DESIGN, *self.factors)}
        self.forms = Codes()  # each row's (tokens, meanings) in display order
        self.answers: list[dict[str, str]] = []  # each form's answers mapping
        self.problem: tuple[int, str] | None = None  # the first row that contradicts the record
        self._problem_of = row_checker(analysis)

    def add(self, offset: int, row: SuiteRow) -> None:
        if self.problem is None and (problem := self._problem_of(row)) is not None:
            self.problem = len(self.ids), problem
        self.ids.add(offset, row)
        cell = row.cell
        for key in ("scenario", "condition", *self.factors):
            self.cells[key].add(cell.get(key))
        self.cells[DESIGN].add(cell.get("design") if "design" not in self.factors else None)
        if self.forms.add((tuple(row.answers.items()), positions.meanings(row))) == len(self.answers):
            self.answers.append(row.answers)

    def moved(self) -> str | None:
        """The meaning whose display slot varies over the suite's rows (positions.moved_of), or None."""
        slots: Counter[tuple[str, ...]] = Counter()
        counts = np.bincount(self.forms.array(), minlength=len(self.forms.values))
        for (_, shown), count in zip(self.forms.values, counts.tolist(), strict=True):
            slots[shown] += count
        return positions.moved_of(slots)


class _Answers:
    """The answered results' columns: the suite row each answers, its outcome values and position columns."""

    def __init__(self, wanted: list[str | None], moved: str | None) -> None:
        self.rows = array("i")  # a suite position (a suite has fewer than 2**31 rows)
        self.values = {column(target): array("d") for target in wanted}
        self.placed = {name: array("d") for name in (positions.COLUMNS if moved is not None else [])}
        self.abstained: Counter[str | None] = Counter()
        self.failed: Counter[str | None] = Counter()

    def add(self, position: int, found: dict[str, float], placed: dict[str, Any]) -> None:
        self.rows.append(position)
        for name, kept in self.values.items():
            kept.append(found.get(name, np.nan))
        for name, value in placed.items():
            self.placed[name].append(float(value))


def load(run_dir: Path) -> Loaded:
    """Read and check a run; one frame row per answered result, with columns y_<target> (or y)."""
    info = read_run_info(run_dir)
    manifest, _ = read_manifest(suite_dir_of(run_dir, info))
    analysis = manifest.analysis or {}
    if analysis.get("family") != "effects":
        raise ScoreInputError(run_dir, "not a run of an effects suite")
    suite = _SuiteColumns(analysis)
    _, head = scan_run(run_dir, suite.add)
    if suite.problem is not None:  # the record and the rows agree: every cell key and answer the scorer reads
        raise row_contradicts(read_suite(head.path), *suite.problem)
    moved = suite.moved()
    found, codes = _read_results(run_dir / RESULTS_FILE, suite, analysis, info.mode, moved)
    drawn = suite.ids.samples  # each suite row's samples, which the check reads
    suite.ids = SuiteIds()  # every result is located: let go of the ids' lookup (24 bytes a suite row)
    codes.check(run_dir / RESULTS_FILE, info, CodedMeanings(suite.forms.array(), suite.answers), drawn)
    del codes  # checked: let go of its columns before the frame is built
    return Loaded(_frame(suite, found), analysis, info.mode, info.model, sum(found.abstained.values()),
                  sum(found.failed.values()), moved, tuple((d, found.abstained[d], found.failed[d]) for d in
                                                          sorted({*found.abstained, *found.failed}, key=str)))


def _read_results(path: Path, suite: _SuiteColumns, analysis: dict[str, Any], mode: str,
                  moved: str | None) -> tuple[_Answers, ResultCodes]:
    """Stream results.jsonl: every row located in the suite and coded for the checks, each answered one's values."""
    found, codes = _Answers(all_targets(analysis), moved), ResultCodes()
    forms, designs = suite.forms.array(), suite.cells[DESIGN]
    design_codes = designs.array()
    wanted: dict[int, list[str | None]] = {}  # per design code, as its rows come
    stream = iter_numbered_results(path)
    while chunk := list(islice(stream, CHUNK)):
        at = suite.ids.positions([result.item_id for _, _, result in chunk])
        for (_, line, result), position in zip(chunk, at.tolist(), strict=True):
            if position < 0:
                raise ScoreInputError(path, f"item_id {result.item_id!r} is not in the suite", row=line,
                                      column="item_id")
            codes.add(line, position, result)
            design = int(design_codes[position])
            name = None if design < 0 else str(designs.values[design])
            if result.error is not None:
                found.failed[name] += 1
                continue
            (pairs, shown), answers = suite.forms.values[forms[position]], suite.answers[forms[position]]
            if design not in wanted:
                wanted[design] = targets(of_design(analysis, name))
            kept = values(result.outcome, result.logprobs, answers, wanted[design], mode)
            if kept is None:
                found.abstained[name] += 1
                continue
            found.add(position, kept, positions.slot_columns([t for t, _ in pairs], shown, result.answer,
                                                            result.logprobs if mode == "logprob" else None, moved))
    return found, codes


def _frame(suite: _SuiteColumns, found: _Answers) -> pd.DataFrame:
    """The frame of the answered results, the columns pandas.DataFrame.from_records made of their records."""
    rows = np.frombuffer(found.rows, dtype=np.int32) if len(found.rows) else np.zeros(0, np.int32)
    keys = ["scenario", "condition", DESIGN, *suite.factors]
    frame = pd.DataFrame({key: suite.cells[key].categorical(suite.cells[key].array()[rows]) for key in keys})
    for name, kept in found.values.items():
        frame[name] = np.array(kept, dtype=float)
    for name, kept in found.placed.items():
        frame[name] = np.array(kept, dtype=bool if name == "m_first" else float)
    return frame  # columns: the cells, the targets' values (all_targets' order, as found.values) and the placed
