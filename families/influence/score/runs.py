"""Load a run folder (run.json + results.jsonl) and its suite into one frame of weighted trials.

Each valid result row becomes weights (w_A, w_B): in sample mode (1, 0) or (0, 1) for the chosen
analysis group; in logprob mode the row stands for all of the item's `samples`, so the weights are
samples x P(group) (expected counts). Errors, abstentions (outcome null) and outcomes that are neither
group_A nor group_B (e.g. BBQ's dropped "unknown") are invalid trials and carry no weight.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from spec_audits.families.influence.score.counts import CONDITION_CODE, LABELS, CountSource
from spec_audits.families.influence.score.flips import ITEM_COLUMNS
from spec_audits.families.influence.score.jsonl import result_pieces
from spec_audits.sdk import (
    RESULTS_FILE,
    SUITE_FILE,
    CodedMeanings,
    IdLookup,
    Manifest,
    RunInfo,
    ScoreInputError,
    SuiteCodes,
    SuiteHead,
    check_result_columns,
    read_suite,
    refuse_repeats,
    repeated,
    row_contradicts,
    scan_run,
    tokens_problem,
)

CELL_FIELDS = ["factor", "group_A", "group_B", "influence", "condition"]
ITEM_KEYS = {"n_A", "n_B", "order", "edge", "item", "first"}
"""Per-item design coordinates: pooled over, never grouping keys (methods §6.1)."""
REASONING_SETTINGS = ("reasoning", "reasoning_effort")
"""run.json settings that name the reasoning setting, which becomes the `reasoning` key (with the suite's own)."""


@dataclass(frozen=True)
class Run:
    """A loaded run and what the scorer needs to know.

    `trials` has one row per answered influence item: its cell fields and keys, and w_A/w_B, the
    choice weights of all its result rows summed (counts in sample mode, expected counts in logprob mode).
    """

    trials: pd.DataFrame
    keys: list[str]
    source: CountSource
    manifest: Manifest
    info: RunInfo
    run_dir: Path

    @property
    def analysis(self) -> dict[str, Any]:
        return self.manifest.analysis or {}


def load_run(run_dir: Path) -> Run:
    """Read run.json, the suite it names and results.jsonl; raise ScoreInputError on any mismatch."""
    columns = SuiteCodes()
    info, suite = scan_run(run_dir, columns.add)  # the rows' messages and ids' texts are never held
    manifest = suite.manifest
    _check_answer_tokens(suite, columns, (manifest.analysis or {}).get("answer"))
    first, second = columns.keys()
    items, extra = _read_items(suite.path / SUITE_FILE, columns, first, manifest)
    lookup = IdLookup(first, second)
    del first, second  # the items hold a copy of the first halves, the look-up its sorted copy
    answered, w_a, w_b = _read_results(run_dir / RESULTS_FILE, items, info, columns, lookup)
    del lookup
    trials = _answered(items, answered, w_a, w_b)
    del items, answered, w_a, w_b
    excluded = (manifest.analysis or {}).get("exclude")  # a factor left out of the analysis (DailyDilemmas)
    if excluded is not None:
        trials = trials[trials["factor"] != str(excluded)].reset_index(drop=True)
    trials["benchmark"] = _constant(str((manifest.analysis or {}).get("benchmark", manifest.suite)), len(trials))
    trials["model"] = _constant(info.model, len(trials))
    keys = ["benchmark", "model"]
    reasoning = reasoning_setting(manifest.analysis or {}, info.settings)
    if reasoning is not None:
        trials["reasoning"] = _constant(str(reasoning), len(trials))
        keys.append("reasoning")
    keys += extra + ["factor", "influence"]
    return Run(trials, keys, "expected" if info.mode == "logprob" else "samples", manifest, info, run_dir)


def _answered(items: pd.DataFrame, answered: np.ndarray, w_a: np.ndarray, w_b: np.ndarray) -> pd.DataFrame:
    """The trials: the answered items of a scored condition, with their weights; the items themselves (no copy of
    their columns) where every item is one."""
    kept = answered & items["condition"].isin(list(CONDITION_CODE)).to_numpy()
    if not kept.all():
        items, w_a, w_b = items[kept], w_a[kept], w_b[kept]
    return items.assign(w_A=w_a, w_B=w_b).reset_index(drop=True)


def _constant(value: str, count: int) -> pd.Categorical:
    """A key every trial of the run shares, as a categorical: a byte a row, not a copy of its text."""
    return pd.Categorical.from_codes(np.zeros(count, np.int8), categories=pd.Index([value], dtype=object))


def _check_answer_tokens(suite: SuiteHead, columns: SuiteCodes, answer: dict[str, Any] | None) -> None:
    """Every row answers with the record's tokens (which say what the first token shows), else a located error.
    Each distinct answers mapping is checked once; the suite is read whole only to name a row that fails."""
    if answer is None:  # a suite compiled before answers were recorded
        return
    for code, answers in enumerate(columns.mappings):
        if (problem := tokens_problem(answers, answer["tokens"])) is not None:
            index = int(np.flatnonzero(np.frombuffer(columns.answer_codes, dtype=np.int32) == code)[0])
            raise row_contradicts(read_suite(suite.path), index, problem)


def reasoning_setting(analysis: dict[str, Any], settings: dict[str, Any]) -> str | None:
    """The run's reasoning setting: the suite's own (`analysis ... reasoning before`: a step-by-step prompt, or
    native reasoning in its decode settings), the run's (`--reasoning-effort`), or both joined by '+'."""
    run = next((settings[k] for k in REASONING_SETTINGS if settings.get(k) is not None), None)
    found = [str(value) for value in (analysis.get("reasoning"), run) if value is not None]
    return "+".join(found) if found else None


def _read_items(path: Path, columns: SuiteCodes, ids: np.ndarray,
                manifest: Manifest) -> tuple[pd.DataFrame, list[str]]:
    """Influence items in suite order (item_id: `ids`, the first halves of the ids' hashes; cell fields, extra keys)
    and the extra key names, from the suite's coded columns (runner/suite_columns.py). Whole-number coordinates (a
    size pair's n_A and n_B) take the smallest integer type that holds them: 2 bytes a row where pandas makes 8."""
    items = columns.columns()
    for column in ("factor", "group_A", "group_B", "condition"):
        if column not in items or pd.isna(items[column]).any():
            row = 1 if column not in items else int(np.flatnonzero(pd.isna(items[column]))[0]) + 1
            raise ScoreInputError(path, "an influence suite row needs cell." + column, row=row, column="cell")
    items.setdefault("influence", None)
    extra = [c for c in items if c not in {"samples", *CELL_FIELDS, *ITEM_KEYS}]
    for column in extra:
        values = pd.Series(items[column]).astype(object)
        items[column] = values.where(values.notna(), None).astype(str)
    coordinates = [c for c in ITEM_COLUMNS if c in items]  # kept for per-item flip rates, never keys
    for column in coordinates:
        if pd.api.types.is_integer_dtype(items[column]):
            items[column] = pd.to_numeric(items[column], downcast="integer")
    first = _first_shown(items, columns, (manifest.analysis or {}).get("answer"))
    kept = [*CELL_FIELDS, *extra, *coordinates]
    return pd.DataFrame({"item_id": ids, **{c: items.pop(c) for c in kept}, "first": first}), extra


def _first_shown(items: dict[str, Any], columns: SuiteCodes, answer: Any) -> pd.Categorical:
    """The group (A or B) whose option each prompt shows first: a meanings row records it in its cell; with
    display labels it is the group the first label means; missing where the suite does not say (a suite
    compiled before its answer kind was recorded)."""
    if isinstance(answer, dict) and answer.get("kind") == "labels":
        first_label = str(answer["tokens"][0])
        meanings = pd.Index([answers.get(first_label) for answers in columns.mappings], dtype=object)
        codes = np.frombuffer(columns.answer_codes, dtype=np.int32)
        chosen = np.full(len(codes), -1, dtype=np.int8)
        for code, group in ((1, "group_B"), (0, "group_A")):  # A where both match, as np.select([A, B]) chose
            values = pd.Categorical(items[group])  # each row's group as a code: no text a row is compared
            meant = values.categories.get_indexer(meanings).astype(np.int32)  # per mapping, its meaning's code
            chosen[meant[codes] == values.codes] = code
    elif "first" in items:
        chosen = np.select([(pd.Series(items["first"]) == g).to_numpy(bool) for g in "AB"], [0, 1], -1)
    else:
        chosen = np.full(len(columns), -1)
    return pd.Categorical.from_codes(chosen, categories=pd.Index(["A", "B"], dtype=object))


def _read_results(path: Path, items: pd.DataFrame, info: RunInfo, columns: SuiteCodes,
                  lookup: IdLookup) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Parse results.jsonl a piece at a time, checking every row against the run and the suite: per item of `items`
    (the suite's order, found by `lookup`), whether a row answered it and the weights (w_A, w_B) its rows give its two
    groups, summed in row order. No column of all the rows is held: a bitmap of (item, sample) slots finds repeats."""
    samples = np.frombuffer(columns.samples, dtype=np.int64)
    slot_of = _slots(samples)
    seen = np.zeros(int(samples.sum()), dtype=bool)
    answered = np.zeros(len(items), dtype=bool)
    w_a, w_b = np.zeros(len(items)), np.zeros(len(items))
    try:
        for frame in result_pieces(path, info.mode == "logprob"):
            position = _checked_positions(path, frame, items, info, columns, lookup)
            sample = frame["sample"].to_numpy()
            _check(path, frame, (sample < 0) | (sample >= samples[position]), "sample",
                   "sample index outside the item's samples")
            slot = slot_of(position, sample)
            refuse_repeats(path, seen[slot] | repeated(slot), frame["row"].to_numpy())
            seen[slot] = True
            answered[position] = True
            piece_a, piece_b = _weights(path, frame, items, info, columns, position)
            np.add.at(w_a, position, piece_a)  # in row order, as np.bincount over all rows summed them
            np.add.at(w_b, position, piece_b)
    except FileNotFoundError as exc:
        raise ScoreInputError(path, "file not found") from exc
    return answered, w_a, w_b


def _slots(samples: np.ndarray) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
    """The (item, sample) slot number of a row's (position, sample): position x samples where every item asks for
    as many (no array a suite row), else its item's first slot (a cumulative sum of the samples) + sample."""
    if len(samples) and samples.min() == samples.max():
        width = int(samples[0])
        return lambda position, sample: position * width + sample
    first_slot = np.concatenate([[0], np.cumsum(samples)])
    return lambda position, sample: first_slot[position] + sample


def _checked_positions(path: Path, frame: pd.DataFrame, items: pd.DataFrame, info: RunInfo, columns: SuiteCodes,
                       lookup: IdLookup) -> np.ndarray:
    """A piece's rows' positions in the suite, once each row names a suite item, its run's model and an outcome its
    answer means (runner/result_checks.py)."""
    position = _positions(frame["item_id"], lookup)
    if (position < 0).any():
        first = frame.iloc[int(np.flatnonzero(position < 0)[0])]
        shown = "null" if pd.api.types.is_scalar(first.item_id) and pd.isna(first.item_id) else repr(first.item_id)
        raise ScoreInputError(path, f"item_id {shown} is not in the suite", row=int(first.row), column="item_id")
    frame["item_id"] = pd.Categorical.from_codes(position, categories=pd.RangeIndex(len(items)))
    codes = np.frombuffer(columns.answer_codes, dtype=np.int32)
    check_result_columns(path, info, lambda names: CodedMeanings(codes[names.to_numpy()], columns.mappings), frame)
    return position


def _weights(path: Path, frame: pd.DataFrame, items: pd.DataFrame, info: RunInfo, columns: SuiteCodes,
             position: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each row's weights (w_A, w_B) for its item's two groups."""
    valid = frame["error"].isna().to_numpy()
    if info.mode != "logprob":
        return _sampled_weights(frame, items.iloc[position], valid)
    codes = np.frombuffer(columns.answer_codes, dtype=np.int32)
    answers = [columns.mappings[c] for c in codes[position].tolist()]
    samples = np.frombuffer(columns.samples, dtype=np.int64)[position]
    return _expected_weights(path, frame, items.iloc[position].assign(samples=samples), answers, valid)


def _positions(ids: pd.Series, lookup: IdLookup) -> np.ndarray:
    """Each id's position in the suite (-1 where absent or null)."""
    texts = ids.to_numpy(object)
    named = np.array([isinstance(text, str) for text in texts], dtype=bool)
    found = np.full(len(texts), -1, dtype=np.int64)
    found[named] = lookup.positions(texts[named].tolist())
    return found


def _sampled_weights(frame: pd.DataFrame, item: pd.DataFrame, valid: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """1 for the group a valid answer chose, 0 for the other (spec_audits.runner.result_checks has made sure that each
    outcome is what its answer means for its item, `item`: each row's)."""
    outcome, names = pd.factorize(frame["outcome"])  # -1 for an abstention
    chose = valid & (outcome >= 0)
    group_a, group_b = (_codes_in(item[g], names) for g in LABELS)
    return (chose & (outcome == group_a)).astype(float), (chose & (outcome == group_b)).astype(float)


def _codes_in(column: pd.Series, names: pd.Index) -> np.ndarray:
    """Each row's value's position in `names` (-1: not there), looking up each distinct value once."""
    codes, distinct = pd.factorize(column)
    return np.where(codes >= 0, names.get_indexer(pd.Index(distinct))[codes], -1)


def _check(path: Path, frame: pd.DataFrame, bad: np.ndarray, column: str, problem: str) -> None:
    if bad.any():
        raise ScoreInputError(path, problem, row=int(frame["row"].iloc[int(np.flatnonzero(bad)[0])]), column=column)


def _expected_weights(path: Path, frame: pd.DataFrame, item: pd.DataFrame, answers: list[dict[str, str]],
                      valid: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """samples x P(group) from the answer-token probabilities (renormalised over the valid tokens)."""
    w = np.zeros((len(frame), 2))
    for i, (probs, meaning, a, b, n) in enumerate(
        zip(frame["logprobs"], answers, item["group_A"], item["group_B"], item["samples"], strict=True)
    ):
        if not valid[i] or not probs:
            continue
        unknown = [t for t in probs if t not in meaning]
        if unknown:
            raise ScoreInputError(
                path,
                f"logprobs token {unknown[0]!r} is not one of the item's answers",
                row=int(frame["row"].iloc[i]),
                column="logprobs",
            )
        total = sum(probs.values())
        by_group = {a: 0.0, b: 0.0}
        for token, p in probs.items():
            if meaning[token] in by_group:
                by_group[meaning[token]] += p
        if total > 0:
            w[i] = n * by_group[a] / total, n * by_group[b] / total
    return w[:, 0], w[:, 1]


def pool_runs(runs: list[Run]) -> tuple[pd.DataFrame, list[str], CountSource]:
    """The trials of several runs (models, reasoning settings, suites) in one frame, with the keys of all of them.

    A key one run lacks (no reasoning setting, another suite's extra key) reads "none" in its rows.
    Two runs of the same benchmark, model and reasoning setting would pool silently, so they are refused.
    """
    sources = {run.source for run in runs}
    if len(sources) > 1:
        odd = next(run for run in runs if run.source != runs[0].source)
        raise ScoreInputError(odd.run_dir, f"is a {odd.info.mode} run but {runs[0].run_dir} is not: "
                              "score sampled and logprob runs separately")
    keys = ["benchmark", "model"] + [k for k in _ordered(runs) if k not in ("benchmark", "model", *_LAST)] + _LAST
    identity = [k for k in ("benchmark", "model", "reasoning") if k in keys]
    seen: dict[tuple[str, ...], Path] = {}
    frames = []
    for run in runs:
        trials = run.trials.assign(**{k: "none" for k in keys if k not in run.trials.columns})
        for coords in trials[identity].drop_duplicates().itertuples(index=False, name=None):
            if coords in seen:
                raise ScoreInputError(run.run_dir, f"answers the same {', '.join(identity)} ({', '.join(coords)}) "
                                      f"as {seen[coords]}; merge shards with spec merge before scoring")
            seen[coords] = run.run_dir
        frames.append(trials)
    return pd.concat(frames, ignore_index=True), keys, runs[0].source


_LAST = ["factor", "influence"]


def _ordered(runs: list[Run]) -> list[str]:
    """The runs' keys in first-seen order, reasoning first so tables read benchmark, model, reasoning."""
    found = ["reasoning"] if any("reasoning" in run.keys for run in runs) else []
    for run in runs:
        found += [k for k in run.keys if k not in found]
    return found
