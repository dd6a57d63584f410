"""Per-condition counts: the one input of every statistic (suite-format.md "Counts tables").

A `CountsTable` has one row per aggregate condition (benchmark, model, factor, influence plus extra key
columns such as `reasoning`), the analysis group names `group_A`/`group_B`, and the six counts `c_X_Y`:
valid trials in condition X (0 baseline, A toward group A, B toward group B) that chose group Y. Counts are
floats so that logprob runs can carry expected counts.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import numpy as np
import pandas as pd

from runner.score_input import ScoreInputError

BASE_KEYS = ["benchmark", "model", "factor", "influence"]
LABELS = ["group_A", "group_B"]
COUNTS = ["c_0_A", "c_0_B", "c_A_A", "c_A_B", "c_B_A", "c_B_B"]
CONDITION_CODE = {"baseline": "0", "toward_A": "A", "toward_B": "B"}

CountSource = Literal["samples", "expected"]


@dataclass(frozen=True)
class CountsTable:
    """Counts per aggregate condition; `keys` are the grouping columns, `source` how counts were made."""

    frame: pd.DataFrame
    keys: list[str]
    source: CountSource = "samples"


def read_counts_csv(path: Path) -> CountsTable:
    """Load and validate a published counts table; every column not named by the format is an extra key."""
    try:
        frame = pd.read_csv(path, dtype=str, keep_default_na=False, skipinitialspace=True)
    except (OSError, UnicodeDecodeError, pd.errors.ParserError, pd.errors.EmptyDataError) as exc:
        raise ScoreInputError(path, f"cannot read the counts table ({exc})") from exc
    frame.columns = [c.strip() for c in frame.columns]
    missing = [c for c in BASE_KEYS + LABELS + COUNTS if c not in frame.columns]
    if missing:
        raise ScoreInputError(path, f"missing column(s) {', '.join(missing)}", column=missing[0])
    if frame.empty:
        raise ScoreInputError(path, "no conditions: the table has a header but no line below it")
    extra = [c for c in frame.columns if c not in BASE_KEYS + LABELS + COUNTS]
    keys = BASE_KEYS[:2] + extra + BASE_KEYS[2:]
    _check_labels(path, frame, keys + LABELS)
    for column in COUNTS:
        frame[column] = _parse_counts(path, frame[column], column)
    _check_unique(path, frame, keys)
    return CountsTable(frame[keys + LABELS + COUNTS].reset_index(drop=True), keys, "samples")


def _check_labels(path: Path, frame: pd.DataFrame, columns: list[str]) -> None:
    for column in columns:
        blank = frame[column].str.strip() == ""
        if blank.any():
            raise ScoreInputError(path, "empty value", row=_row(blank), column=column)


def _parse_counts(path: Path, text: pd.Series, column: str) -> pd.Series:
    """Counts must be non-negative integers (written as 12 or 12.0)."""
    values = pd.to_numeric(text.str.strip(), errors="coerce")
    problems = [
        (values.isna() | ~np.isfinite(values), "is not a number"),
        (values < 0, "is negative"),
        (values != np.floor(values), "is not an integer"),
    ]
    for bad, what in problems:
        if bad.any():
            row = _row(bad)
            raise ScoreInputError(path, f"count {text.iloc[row - 1]!r} {what}", row=row, column=column)
    return values.astype(float)


def _check_unique(path: Path, frame: pd.DataFrame, keys: list[str]) -> None:
    duplicated = frame.duplicated(keys)
    if duplicated.any():
        raise ScoreInputError(path, "duplicate condition (same key columns as an earlier row)", row=_row(duplicated))


def _row(mask: pd.Series) -> int:
    """1-based data-row number (header not counted) of the first True in `mask`."""
    return int(np.flatnonzero(mask.to_numpy())[0]) + 1


def counts_from_trials(trials: pd.DataFrame, keys: list[str], source: CountSource) -> CountsTable:
    """Pool trial weights (`w_A`, `w_B`: choices of group A/B) into one counts row per condition.

    Baseline trials whose `influence` is null are shared by every influence of their factor (and other
    keys), as manifest.balance[].shared == {"baseline": "influence"} declares; baseline trials that carry
    an influence belong to that influence only.
    """
    directed = trials[trials["condition"] != "baseline"]
    baseline = trials[trials["condition"] == "baseline"]
    own = pd.concat([directed, baseline[baseline["influence"].notna()]])
    table = _pivot(own, keys + LABELS)
    shared = baseline[baseline["influence"].isna()]
    if not shared.empty and not table.empty:
        shared_keys = [k for k in keys if k != "influence"] + LABELS
        shared_counts = _pivot(shared, shared_keys)[shared_keys + ["c_0_A", "c_0_B"]]
        table = table.merge(shared_counts, on=shared_keys, how="left", suffixes=("", "_shared"))
        for column in ("c_0_A", "c_0_B"):
            table[column] = table[column] + table.pop(f"{column}_shared").fillna(0.0)
    return CountsTable(table.reset_index(drop=True), keys, source)


def _pivot(trials: pd.DataFrame, by: list[str]) -> pd.DataFrame:
    """Sum w_A/w_B per (by, condition) and spread the conditions into the six count columns."""
    if trials.empty:
        return pd.DataFrame(columns=by + COUNTS)
    code = trials["condition"].map(CONDITION_CODE)
    sums = trials.assign(code=code).groupby(by + ["code"], dropna=False, sort=True)[["w_A", "w_B"]].sum()
    wide = sums.unstack("code")
    wide.columns = [f"c_{cond}_{group[-1]}" for group, cond in wide.columns]
    wide = wide.reindex(columns=COUNTS).fillna(0.0).reset_index()
    return wide[by + COUNTS]
