"""Per-condition counts: the one input of every statistic (docs/suite-format.md, "Counts tables").

A `CountsTable` has one row per aggregate condition (benchmark, model, factor, influence plus extra key
columns such as `reasoning`), the analysis group names `group_A`/`group_B`, and the six counts `c_X_Y`:
valid trials in condition X (0 baseline, A toward group A, B toward group B) that chose group Y. Counts are
floats so that logprob runs can carry expected counts.

Where the display order is known, the baseline counts are also split by the group shown first
(`c_0_Y_firstG`: baseline trials that chose Y when G's option came first), which measures position bias.
A logprob run adds, per arm, the sums its between-item intervals need (`v_X_*`, see intervals.item_mean).
"""

from __future__ import annotations

import io
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, cast

import numpy as np
import pandas as pd

from spec_audits.families.influence.score.groups import group_sums, taken
from spec_audits.sdk import ScoreInputError, read_bytes_capped

BASE_KEYS = ["benchmark", "model", "factor", "influence"]
LABELS = ["group_A", "group_B"]
COUNTS = ["c_0_A", "c_0_B", "c_A_A", "c_A_B", "c_B_A", "c_B_B"]
CONDITION_CODE = {"baseline": "0", "toward_A": "A", "toward_B": "B"}
ORDER_COUNTS = ["c_0_A_firstA", "c_0_B_firstA", "c_0_A_firstB", "c_0_B_firstB"]
"""Baseline trials by the group chosen and the group shown first; optional in a published table."""
MOMENTS = [f"v_{code}_{s}" for code in "0AB" for s in ("items", "m2", "B2", "Bm")] + [
    f"v_0_{s}_first{g}" for g in "AB" for s in ("items", "m2", "A2", "Am")]
"""Per arm of a logprob run: its items and the sums of m², w², w·m (m samples, w expected choices)."""
NO_ORDER_COLUMNS = "the counts table has no display-order columns (c_0_A_firstA, ...)"

CountSource = Literal["samples", "expected"]
MAX_COUNT = 10**9
"""The most trials one count of a published table may hold: beyond any audit, and exact as a float."""


@dataclass(frozen=True)
class CountsTable:
    """Counts per aggregate condition; `keys` are the grouping columns, `source` how counts were made."""

    frame: pd.DataFrame
    keys: list[str]
    source: CountSource = "samples"
    no_order: str | None = None  # why the counts are not split by display order (None: both orders are shown)


def read_counts_csv(path: Path) -> CountsTable:
    """Load and validate a published counts table; every column not named by the format is an extra key."""
    try:
        frame = pd.read_csv(io.BytesIO(read_bytes_capped(path)), dtype=str, keep_default_na=False,
                            skipinitialspace=True)
    except (OSError, UnicodeDecodeError, pd.errors.ParserError, pd.errors.EmptyDataError) as exc:
        raise ScoreInputError(path, f"cannot read the counts table ({exc})") from exc
    frame.columns = [c.strip() for c in frame.columns]
    missing = [c for c in BASE_KEYS + LABELS + COUNTS if c not in frame.columns]
    if missing:
        raise ScoreInputError(path, f"missing column(s) {', '.join(missing)}", column=missing[0])
    orders = [c for c in ORDER_COUNTS if c in frame.columns]
    if orders and len(orders) < len(ORDER_COUNTS):
        lacking = [c for c in ORDER_COUNTS if c not in orders]
        raise ScoreInputError(path, f"display-order columns come as a set of four: missing {', '.join(lacking)}",
                              column=lacking[0])
    if frame.empty:
        raise ScoreInputError(path, "no conditions: the table has a header but no line below it")
    extra = [c for c in frame.columns if c not in BASE_KEYS + LABELS + COUNTS + ORDER_COUNTS]
    keys = BASE_KEYS[:2] + extra + BASE_KEYS[2:]
    _check_labels(path, frame, keys + LABELS)
    for column in COUNTS + orders:
        frame[column] = _parse_counts(path, frame[column], column)
    _check_unique(path, frame, keys)
    return CountsTable(frame[keys + LABELS + COUNTS + orders].reset_index(drop=True), keys, "samples",
                       None if orders else NO_ORDER_COLUMNS)


def _check_labels(path: Path, frame: pd.DataFrame, columns: list[str]) -> None:
    for column in columns:
        blank = frame[column].str.strip() == ""
        if blank.any():
            raise ScoreInputError(path, "empty value", row=_row(blank), column=column)


def _parse_counts(path: Path, text: pd.Series, column: str) -> pd.Series:
    """Counts must be whole numbers from 0 to MAX_COUNT (written as 12 or 12.0)."""
    values = pd.to_numeric(text.str.strip(), errors="coerce")
    problems = [
        (values.isna() | ~np.isfinite(values), "is not a number"),
        (values < 0, "is negative"),
        (values != np.floor(values), "is not an integer"),
        (values > MAX_COUNT, f"is more than {MAX_COUNT:,}, the most trials one count may hold"),
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


def counts_from_trials(trials: pd.DataFrame, keys: list[str], source: CountSource,
                       no_order: str | None = None) -> CountsTable:
    """Pool trial weights (`w_A`, `w_B`: choices of group A/B) into one counts row per condition; with a
    `first` column (the group shown first), the baseline counts by display order too; in a logprob run the
    sums of the between-item intervals.

    Baseline trials whose `influence` is null are shared by every influence of their factor (and other
    keys), as manifest.balance[].shared == {"baseline": "influence"} declares; baseline trials that carry
    an influence belong to that influence only.
    """
    shown = set(trials["first"].dropna()) if "first" in trials.columns else set()
    if no_order is None and len(shown) < 2:
        no_order = "every prompt is shown in one display order" if shown else \
            "the suite does not record which option each prompt shows first (recompile it)"
    ordered = no_order is None
    wanted = COUNTS + (ORDER_COUNTS if ordered else []) + (MOMENTS if source == "expected" else [])
    moments = source == "expected"
    shared = ((trials["condition"] == "baseline") & trials["influence"].isna()).to_numpy()
    table = _pivot(trials, ~shared, keys + LABELS, wanted, _values(trials, ~shared, ordered, moments))
    if shared.any() and not table.empty:
        shared_keys = [k for k in keys if k != "influence"] + LABELS
        base_columns = [c for c in wanted if c.startswith(("c_0_", "v_0_"))]
        values = _values(trials, shared, ordered, moments)
        shared_counts = _pivot(trials, shared, shared_keys, wanted, values)[shared_keys + base_columns]
        table = table.merge(shared_counts, on=shared_keys, how="left", suffixes=("", "_shared"))
        for column in base_columns:
            table[column] = table[column] + table.pop(f"{column}_shared").fillna(0.0)
    return CountsTable(table.reset_index(drop=True), keys, source, no_order)


def _values(trials: pd.DataFrame, rows: np.ndarray, ordered: bool,
            moments: bool) -> Iterator[tuple[str, np.ndarray]]:
    """The values of `rows` summed into counts, one at a time (each made only once the one before is summed), named
    with # where the condition code goes (c_#_A)."""
    w_a, w_b = taken(trials["w_A"].to_numpy(float), rows), taken(trials["w_B"].to_numpy(float), rows)
    yield "c_#_A", w_a
    yield "c_#_B", w_b
    m = w_a + w_b if moments else w_a[:0]  # m only for a logprob run's sums
    if moments:
        yield "v_#_items", (m > 0).astype(float)
        yield "v_#_m2", m**2
        yield "v_#_B2", w_b**2
        yield "v_#_Bm", w_b * m
    for g in "AB" if ordered else "":
        shown = taken((trials["first"] == g).to_numpy(), rows)
        yield f"c_#_A_first{g}", w_a * shown
        yield f"c_#_B_first{g}", w_b * shown
        if moments:
            yield f"v_#_items_first{g}", (shown & (m > 0)).astype(float)
            yield f"v_#_m2_first{g}", m**2 * shown
            yield f"v_#_A2_first{g}", w_a**2 * shown
            yield f"v_#_Am_first{g}", w_a * m * shown


def _pivot(trials: pd.DataFrame, rows: np.ndarray, by: list[str], wanted: list[str],
           values: Iterator[tuple[str, np.ndarray]]) -> pd.DataFrame:
    """Sum the `values` of `rows` per (by, condition) and spread the conditions into the `wanted` columns."""
    if not rows.any():
        return pd.DataFrame(columns=by + wanted)
    keyed = trials[by].assign(code=trials["condition"].map(CONDITION_CODE))
    sums = group_sums(keyed, by + ["code"], values, rows)
    # pandas types unstack as a DataFrame or a Series, and its columns as names: here they are (value, code) pairs
    wide = cast(pd.DataFrame, sums.set_index(by + ["code"]).unstack("code"))
    wide.columns = [value.replace("#", cond) for value, cond in cast(list[tuple[str, str]], list(wide.columns))]
    wide = wide.reindex(columns=wanted).fillna(0.0).reset_index()
    return wide[by + wanted]
