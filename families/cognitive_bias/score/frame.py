"""The bank-row frame of a conditional-bias run, built from the columns of load.py and columns.py: a record per model
and bank row with the answers of both arms in each condition, Eq. 1 per condition, the six row scalars and the
bank row's covariates, in the order and with the column types of the records it replaces.

Answers are 0-based original option indices, NaN for an abstention or a failed call; records come model by model
(names in order), bank rows in suite order. The answers, scores and float covariates are float arrays, the other
columns lists of values held once (pandas makes its arrow strings of them), so the frame is about 250 bytes a
bank row."""

from __future__ import annotations

from array import array
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from spec_audits.families.cognitive_bias.score.columns import RECORD_CONDITION, BiasSuite, Records
from spec_audits.families.cognitive_bias.score.metric import bias_metric, effects

CONDITIONS = ("zero_shot", "neutral_turn", "biased_turn")


@dataclass(frozen=True)
class Finals:
    """Each (item, sample)'s result row (one each: a repeat is refused), in file order: its suite position, model and
    answer codes (into `model_names`, `answer_texts`; -1: no answer) and whether the call failed."""

    positions: np.ndarray
    models: np.ndarray
    answers: np.ndarray
    failed: np.ndarray
    model_names: list[Any]
    answer_texts: list[Any]


def values_of(values: Sequence[Any], codes: np.ndarray) -> list[Any]:
    """The values of `codes` (-1: None), as a list pandas infers a column's type from, as it does for records."""
    held = np.empty(len(values) + 1, dtype=object)
    held[:len(values)] = list(values)
    return held[codes].tolist()


def answer_facts(suite: BiasSuite, finals: Finals) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per final row: its answer's original option index (NaN for a failure, no answer or another token), whether
    it is the label shown first ("1" or "A") and whether it is the original first option, each worked out once
    per distinct (answers mapping, answer)."""
    width = len(finals.answer_texts) + 1
    forms = suite.forms.array()[finals.positions].astype(np.int64)
    pairs, inverse = np.unique(forms * width + finals.answers + 1, return_inverse=True)
    facts = np.array([_facts(suite.forms.values[pair // width],
                             None if pair % width == 0 else finals.answer_texts[pair % width - 1])
                      for pair in pairs.tolist()], dtype=float).reshape(-1, 3)[inverse.ravel()]
    return np.where(finals.failed, np.nan, facts[:, 0]), facts[:, 1] == 1, facts[:, 2] == 1


def _facts(answers: dict[str, str], answer: str | None) -> tuple[float, bool, bool]:
    index = float(answers[answer]) if answer is not None and answer in answers else np.nan
    return index, answer == ("1" if "1" in answers else "A"), answers.get(str(answer)) == "0"


class AnswerTable:
    """The index answered per (model, owner, condition, arm) code, the later final row winning, found by a binary
    search of the sorted keys."""

    def __init__(self, suite: BiasSuite, finals: Finals, index: np.ndarray) -> None:
        conditions, self.conditions = suite.text_codes("condition")
        arms, self.arms = suite.text_codes("arm")
        at = finals.positions
        self.shape = (len(finals.model_names), len(suite.owners.values), len(self.conditions), len(self.arms))
        keys = self._key(finals.models, suite.owners.array()[at], conditions[at], arms[at])
        self.keys, last = np.unique(keys[::-1], return_index=True)
        self.values = index[::-1][last]

    def _key(self, models: Any, owners: np.ndarray, conditions: Any, arms: Any) -> np.ndarray:
        return np.ravel_multi_index(np.broadcast_arrays(models, owners, conditions, arms), self.shape)

    def get(self, model: int, owners: np.ndarray, condition: str, arm: str) -> tuple[np.ndarray, np.ndarray]:
        """The index answered for each owner (NaN where none) and whether a final row is there at all."""
        if condition not in self.conditions or arm not in self.arms or not len(self.keys):
            return np.full(len(owners), np.nan), np.zeros(len(owners), dtype=bool)
        wanted = self._key(model, owners, self.conditions.index(condition), self.arms.index(arm))
        at = np.minimum(np.searchsorted(self.keys, wanted), len(self.keys) - 1)
        found = self.keys[at] == wanted
        return np.where(found, self.values[at], np.nan), found


def bank_rows(suite: BiasSuite, finals: Finals, index: np.ndarray, analysis: dict[str, Any]) -> pd.DataFrame:
    """One record per (model, bank row) the run reached (a biased-turn answer of the control arm is there: --limit
    and --shard leave some out), models in name order, bank rows in suite order."""
    table, records = AnswerTable(suite, finals, index), suite.records
    arms = [str(arm) for arm in analysis["arms"]]
    owners, parts = np.array(records.bank_owners, dtype=np.int64), []
    for model in sorted(set(finals.models.tolist()), key=lambda code: finals.model_names[code]):
        reached = np.flatnonzero(table.get(model, owners, RECORD_CONDITION, arms[0])[1])
        name = [finals.model_names[model]] * len(reached)
        parts.append({"model": name} | _model_rows(suite, table, model, reached, arms))
    order = ["model", "target", "human", "unit", "bank_row", "diagonal",
             *[f"{a}_{c}" for c in CONDITIONS for a in ("a1", "a2", "m")], *SCALARS]
    return pd.DataFrame({key: _joined([part[key] for part in parts])
                         for key in dict.fromkeys([*order, *records.covariates.columns]) if parts and key in parts[0]})


SCALARS = ("abs_zero_shot", "abs_neutral_turn", "abs_biased_turn", "presence", "content", "total")


def _joined(parts: list[Any]) -> Any:
    """One column of every model's records: an array of floats where each model's is one, else a list."""
    if all(isinstance(part, np.ndarray) for part in parts):
        return np.concatenate(parts)
    return [value for part in parts for value in part]


def _model_rows(suite: BiasSuite, table: AnswerTable, model: int, reached: np.ndarray,
                arms: list[str]) -> dict[str, Any]:
    """The columns of one model's records (its bank rows reached, in suite order): the answers, scores and float
    covariates as arrays, the rest as lists of the values."""
    records = suite.records
    at = np.array(records.positions, dtype=np.int64)[reached]
    found: dict[str, Any] = {key: values_of(suite.cells[cell].values, suite.column(cell)[at]) for key, cell in
                             (("target", "target_bias"), ("human", "human_bias"))}
    found["unit"] = values_of(suite.units.values, suite.units.array()[at])
    found["bank_row"] = [records.bank_rows[row] for row in reached.tolist()]
    found["diagonal"] = values_of(suite.cells["diagonal"].values, suite.column("diagonal")[at])
    owners = {"zero_shot": records.unit_owners, "neutral_turn": records.unit_owners,
              "biased_turn": records.bank_owners}
    for condition in CONDITIONS:
        owner = np.array(owners[condition], dtype=np.int64)[reached]
        for name, arm in zip(("a1", "a2"), arms, strict=True):
            found[f"{name}_{condition}"] = table.get(model, owner, condition, arm)[0]
    found |= _scores(records, reached, found)
    return found | {key: np.frombuffer(column)[reached] if isinstance(column, array) else
                    [column[row] for row in reached.tolist()] for key, column in records.covariates.columns.items()}


def _scores(records: Records, reached: np.ndarray, found: dict[str, Any]) -> dict[str, np.ndarray]:
    """Eq. 1 per condition and the six row scalars of each record, as metric.py computes them, a record at a time
    into arrays."""
    metrics = records.metrics.array()
    scores = {key: array("d") for key in (*[f"m_{c}" for c in CONDITIONS], *SCALARS)}
    answers = [(found[f"a1_{c}"], found[f"a2_{c}"]) for c in CONDITIONS]
    for position, row in enumerate(reached.tolist()):
        metric = records.metrics.values[metrics[row]]
        m = [bias_metric(float(a1[position]), float(a2[position]), metric) for a1, a2 in answers]
        for condition, value in zip(CONDITIONS, m, strict=True):
            scores[f"m_{condition}"].append(value)
        for key, value in effects(*m).items():
            scores[key].append(value)
    return {key: np.array(values, dtype=float) for key, values in scores.items()}
