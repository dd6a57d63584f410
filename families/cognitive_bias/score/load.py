"""A conditional-bias run as one record per (model, bank row): the answers of both arms in each condition
(0-based original option indices; NaN for an abstention or a failed call), Eq. 1 per condition, the six
row scalars and the bank row's covariates. Shared rows (zero_shot, neutral_turn) are found by unit."""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

import pandas as pd

from spec_audits.families.cognitive_bias.rows import check_rows
from spec_audits.families.cognitive_bias.score.metric import bias_metric, effects
from spec_audits.families.cognitive_bias.score.position import answer_record
from spec_audits.sdk import (
    RESULTS_FILE,
    Manifest,
    ResultCodes,
    ScoreInputError,
    Suite,
    SuiteRow,
    check_study_runs,
    iter_numbered_results,
    read_run_info,
    scan_run,
)

CONDITIONS = ("zero_shot", "neutral_turn", "biased_turn")


@dataclass(frozen=True)
class BiasRun:
    """The bank-row frame, the manifest's analysis settings, and abstentions per (model, condition)."""

    rows: pd.DataFrame
    manifest: Manifest
    abstentions: pd.DataFrame
    failed: int
    answers: pd.DataFrame  # one record per valid answer: its display order and whether it was the first shown

    @property
    def analysis(self) -> dict[str, Any]:
        return self.manifest.analysis or {}


def load_bias_run(run_dir: Path) -> BiasRun:
    """Both files streamed (docs/cognitive-bias.md, Memory): the suite's rows held without their messages, of the
    results only each (item, sample)'s final one, and of it only its item, model, answer and error."""
    suite = _slim_suite(run_dir)
    check_rows(suite.manifest.analysis or {}, suite)  # every arm, bias and covariate the scorer reads is there
    results = _final_results(run_dir, suite)
    if not results:
        raise ScoreInputError(run_dir / RESULTS_FILE, "no results to score")
    items = {row.id: row for row in suite.rows}
    answers: dict[tuple[str, str, str, str], float] = {}  # (model, owner, condition, arm) -> index
    counts: Counter[tuple[str, str, str]] = Counter()
    shown = []
    for result in results:
        row = items.get(result.item_id)
        if row is None:
            raise ScoreInputError(run_dir / RESULTS_FILE, f"item {result.item_id} is not in the suite")
        index = _index(row, result.answer) if result.error is None else math.nan
        cell = row.cell
        answers[(result.model, _owner(row), str(cell["condition"]), str(cell["arm"]))] = index
        counts[(result.model, str(cell["condition"]), "abstained" if math.isnan(index) else "answered")] += 1
        if not math.isnan(index):
            shown.append(answer_record(result.model, row, result.answer))
    analysis = suite.manifest.analysis or {}
    models = sorted({r.model for r in results})
    records = [_record(model, row, answers, analysis) for model in models for row in suite.rows
               if row.cell.get("condition") == "biased_turn" and row.cell.get("arm") == analysis["arms"][0]]
    frame = pd.DataFrame([r for r in records if r is not None])
    if frame.empty:
        raise ScoreInputError(run_dir / RESULTS_FILE, "no bank row has answers in the biased_turn condition")
    return BiasRun(frame, suite.manifest, _abstentions(counts), sum(r.error is not None for r in results),
                   pd.DataFrame(shown))


def _slim_suite(run_dir: Path) -> Suite:
    """The run's suite without its rows' messages and extraction prompt (most of a row's bytes), which the scorer
    never reads, each distinct answers mapping, decode settings, metric and covariates held once."""
    rows: list[SuiteRow] = []
    held: dict[str, Any] = {}  # repr (keys in order, types told apart) -> the equal value already held

    def once(value: Any) -> Any:
        return held.setdefault(repr(value), value) if isinstance(value, dict) else value

    def keep(offset: int, row: SuiteRow) -> None:
        meta = None if row.meta is None else {key: once(value) for key, value in row.meta.items()}
        rows.append(row.model_copy(update={"messages": [], "extract": None, "answers": once(row.answers),
                                           "decode": once(row.decode), "meta": meta}))

    _, head = scan_run(run_dir, keep)
    return Suite(path=head.path, manifest=head.manifest, manifest_sha256=head.manifest_sha256, sha256=head.sha256,
                 rows=rows)


class _Final(NamedTuple):
    """What the scorer reads of a result row."""

    item_id: str
    model: str
    answer: str | None
    error: str | None


def _final_results(run_dir: Path, suite: Suite) -> list[_Final]:
    """results.jsonl's final row of each (item, sample) (runner/results_io.final_rows), only what the scorer reads
    of it, each row checked against the run and the suite as it streams."""
    path, codes = run_dir / RESULTS_FILE, ResultCodes()
    position = {row.id: index for index, row in enumerate(suite.rows)}
    kept: dict[tuple[str, int], _Final] = {}
    for _, line, row in iter_numbered_results(path):
        codes.add(line, position.get(row.item_id, -1), row)
        key = (row.item_id, row.sample)
        if key not in kept or row.error is None or kept[key].error is not None:
            answer = codes.answers.codes[-1]  # the model and answer as the texts the codes hold, each once
            kept[key] = _Final(row.item_id, codes.models.values[codes.models.codes[-1]],
                               None if answer < 0 else codes.answers.values[answer], row.error)
    codes.check(path, read_run_info(run_dir), [row.answers for row in suite.rows])
    return list(kept.values())


def load_bias_runs(run_dirs: list[Path]) -> BiasRun:
    """Several runs of one conditional-bias suite (one model each, e.g. a study's) as one BiasRun."""
    runs = [load_bias_run(run_dir) for run_dir in run_dirs]
    check_study_runs(run_dirs, [r.manifest for r in runs], [r.rows["model"].unique() for r in runs])
    return BiasRun(pd.concat([r.rows for r in runs], ignore_index=True),
                   runs[0].manifest, pd.concat([r.abstentions for r in runs], ignore_index=True),
                   sum(r.failed for r in runs), pd.concat([r.answers for r in runs], ignore_index=True))


def _owner(row: SuiteRow) -> str:
    """Shared rows belong to their unit, the others to their bank row."""
    meta = row.meta or {}
    return str(meta.get("bank_row") or row.unit)


def _index(row: SuiteRow, answer: str | None) -> float:
    if answer is None or answer not in row.answers:
        return math.nan
    return float(row.answers[answer])


def _record(model: str, row: SuiteRow, answers: dict[tuple[str, str, str, str], float],
            analysis: dict[str, Any]) -> dict[str, Any] | None:
    meta = row.meta or {}
    control, treatment = analysis["arms"]
    owners = {"zero_shot": str(row.unit), "neutral_turn": str(row.unit), "biased_turn": str(meta["bank_row"])}
    if (model, owners["biased_turn"], "biased_turn", control) not in answers:
        return None  # a bank row this run did not reach (--limit, --shard)
    record: dict[str, Any] = {"model": model, "target": row.cell["target_bias"], "human": row.cell["human_bias"],
                              "unit": row.unit, "bank_row": meta["bank_row"], "diagonal": row.cell["diagonal"]}
    for condition in CONDITIONS:
        a1 = answers.get((model, owners[condition], condition, control), math.nan)
        a2 = answers.get((model, owners[condition], condition, treatment), math.nan)
        record |= {f"a1_{condition}": a1, f"a2_{condition}": a2, f"m_{condition}": bias_metric(a1, a2, meta["metric"])}
    record |= effects(record["m_zero_shot"], record["m_neutral_turn"], record["m_biased_turn"])
    return record | dict(meta.get("covariates") or {})


def _abstentions(counts: Counter[tuple[str, str, str]]) -> pd.DataFrame:
    keys = sorted({(model, condition) for model, condition, _ in counts})
    rows = [{"model": m, "condition": c, "answered": counts[(m, c, "answered")],
             "abstained": counts[(m, c, "abstained")]} for m, c in keys]
    frame = pd.DataFrame(rows)
    frame["rate"] = frame["abstained"] / (frame["answered"] + frame["abstained"])
    return frame
