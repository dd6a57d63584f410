"""A conditional-bias run read as columns, each file in one stream: the suite into `columns.BiasSuite`, results.jsonl
into arrays of each row's suite position, sample, model, answer and failure, checked at the end of the stream
(`ResultCodes`: a row that repeats an earlier one's item and sample is refused, as every family's scorer does).

The bank-row frame (frame.py), the abstentions and the position answers are built from those arrays; shared rows
(zero_shot, neutral_turn) are found by unit. docs/cognitive-bias.md, Memory, says what is held and why."""

from __future__ import annotations

from array import array
from collections import Counter
from dataclasses import dataclass
from itertools import islice
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from spec_audits.families.cognitive_bias.score.columns import BiasSuite
from spec_audits.families.cognitive_bias.score.frame import Finals, answer_facts, bank_rows, values_of
from spec_audits.families.cognitive_bias.score.position import COUNTS
from spec_audits.sdk import (
    RESULTS_FILE,
    CodedMeanings,
    Manifest,
    ResultCodes,
    RunInfo,
    ScoreInputError,
    check_study_runs,
    iter_numbered_results,
    read_manifest,
    read_run_info,
    read_suite,
    row_contradicts,
    scan_run,
    suite_dir_of,
    unmap_freed_arrays,
)

CHUNK = 4096  # result rows looked up in the suite's ids at a time


@dataclass(frozen=True)
class BiasRun:
    """The bank-row frame, the manifest's analysis settings, and abstentions per (model, condition)."""

    rows: pd.DataFrame
    manifest: Manifest
    abstentions: pd.DataFrame
    failed: int
    answers: pd.DataFrame  # valid answers per model, target bias, unit, condition and display order (_shown)

    @property
    def analysis(self) -> dict[str, Any]:
        return self.manifest.analysis or {}


def load_bias_run(run_dir: Path) -> BiasRun:
    """Both files streamed into columns; see the module docstring."""
    unmap_freed_arrays()
    info = read_run_info(run_dir)
    manifest, _ = read_manifest(suite_dir_of(run_dir, info))
    analysis = manifest.analysis or {}
    suite = BiasSuite(analysis)
    _, head = scan_run(run_dir, suite.add)
    if suite.problem is not None:  # every arm, bias and covariate the scorer reads is there
        raise row_contradicts(read_suite(head.path), *suite.problem)
    finals = _read_results(run_dir / RESULTS_FILE, suite, info)
    if not len(finals.positions):
        raise ScoreInputError(run_dir / RESULTS_FILE, "no results to score")
    index, first, original = answer_facts(suite, finals)
    frame = bank_rows(suite, finals, index, analysis)
    if frame.empty:
        raise ScoreInputError(run_dir / RESULTS_FILE, "no bank row has answers in the biased_turn condition")
    return BiasRun(frame, head.manifest, _abstentions(suite, finals, index), int(finals.failed.sum()),
                   _shown(suite, finals, index, first, original))


def _read_results(path: Path, suite: BiasSuite, info: RunInfo) -> Finals:
    """results.jsonl's rows as arrays, every row checked against the run and the suite (`ResultCodes`) as it streams,
    a repeated (item, sample) refused."""
    codes, failed = ResultCodes(), array("b")
    stream = iter_numbered_results(path)
    while chunk := list(islice(stream, CHUNK)):
        at = suite.ids.positions([result.item_id for _, _, result in chunk])
        for (_, line, result), position in zip(chunk, at.tolist(), strict=True):
            if position < 0:
                raise ScoreInputError(path, f"item {result.item_id} is not in the suite", row=line, column="item_id")
            codes.add(line, position, result)
            failed.append(result.error is not None)
    codes.check(path, info, CodedMeanings(suite.forms.array(), suite.forms.values), suite.ids.samples)
    return Finals(np.array(codes.positions, dtype=np.int64), codes.models.array(), codes.answers.array(),
                  np.array(failed, dtype=bool), codes.models.values, codes.answers.values)


def load_bias_runs(run_dirs: list[Path]) -> BiasRun:
    """Several runs of one conditional-bias suite (one model each, e.g. a study's) as one BiasRun."""
    runs = [load_bias_run(run_dir) for run_dir in run_dirs]
    check_study_runs(run_dirs, [r.manifest for r in runs], [r.rows["model"].unique() for r in runs])
    return BiasRun(pd.concat([r.rows for r in runs], ignore_index=True),
                   runs[0].manifest, pd.concat([r.abstentions for r in runs], ignore_index=True),
                   sum(r.failed for r in runs), pd.concat([r.answers for r in runs], ignore_index=True))


def _shown(suite: BiasSuite, finals: Finals, index: np.ndarray, first: np.ndarray,
           original: np.ndarray) -> pd.DataFrame:
    """The valid answers counted per model, target bias, unit, condition and display order (position.COUNTS): all
    of them, those of the label shown first and those of the original first option."""
    kept = ~np.isnan(index)
    if not kept.any():
        return pd.DataFrame()
    at = finals.positions[kept]
    keys = ("target_bias", "condition", "reversed")
    coded = [finals.models[kept], suite.units.array()[at], *(suite.column(key)[at] for key in keys)]
    sizes = [len(finals.model_names), len(suite.units.values), *(len(suite.cells[key].values) for key in keys)]
    cells, inverse = np.unique(np.ravel_multi_index([codes + 1 for codes in coded], [n + 1 for n in sizes]),
                               return_inverse=True)
    model, unit, target, condition, order = (codes - 1 for codes in np.unravel_index(cells, [n + 1 for n in sizes]))
    reversed_of = np.array([int(value or 0) for value in suite.cells["reversed"].values] + [0], dtype=np.int64)
    counts = {name: np.bincount(inverse.ravel(), weights=weights, minlength=len(cells)).astype(np.int64)
              for name, weights in zip(COUNTS, (None, first[kept], original[kept]), strict=True)}
    return pd.DataFrame({"model": values_of(finals.model_names, model), "target_bias": values_of(
        suite.cells["target_bias"].values, target), "unit": values_of(suite.units.values, unit),
        "condition": values_of(suite.cells["condition"].values, condition), "reversed": reversed_of[order], **counts})


def _abstentions(suite: BiasSuite, finals: Finals, index: np.ndarray) -> pd.DataFrame:
    """Answered and abstained final rows (a failed call abstains) per model and condition, and the rate."""
    conditions, names = suite.text_codes("condition")
    cells = finals.models.astype(np.int64) * len(names) + conditions[finals.positions]
    counts: Counter[tuple[str, str, str]] = Counter()
    for kind, mask in (("answered", ~np.isnan(index)), ("abstained", np.isnan(index))):
        found, count = np.unique(cells[mask], return_counts=True)
        for cell, n in zip(found.tolist(), count.tolist(), strict=True):
            counts[(finals.model_names[cell // len(names)], names[cell % len(names)], kind)] = n
    keys = sorted({(model, condition) for model, condition, _ in counts})
    rows = [{"model": m, "condition": c, "answered": counts[(m, c, "answered")],
             "abstained": counts[(m, c, "abstained")]} for m, c in keys]
    frame = pd.DataFrame(rows)
    frame["rate"] = frame["abstained"] / (frame["answered"] + frame["abstained"])
    return frame
