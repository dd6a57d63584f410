"""`spec score --cells FILE.csv`: re-score a published per-cell table (the released schema, one file per
model or a `model` column) from the cell moments alone, so that a paper's Table 1 can be checked.

Pooled over cells i with n_i rows, mean m_i and sd s_i (blank when n_i = 1: no spread):
  δ̄ = Σ n_i m_i / N,   s² = Σ [(n_i − 1) s_i² + n_i (m_i − δ̄)²] / (N − 1),   t = δ̄ √N / s
The same for the diagonal (target = human) and the off-diagonal cells, with Student's t between them
(pooled variance), and ATT_unmatched = δ̄_diag − δ̄_off.

The file is a stranger's data: names are read as text (a model called `NaNo-7B` or `NA` stays so), a
cell with n = 0 or a blank mean (no scored rows) is valid and skipped (counted and listed), a negative or
non-finite number is refused with its row and column, so is a cell given twice, and a statistic the cells
cannot support (one row, zero variance) is absent with its reason, never NaN or Infinity.
"""

from __future__ import annotations

import io
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from spec_audits.sdk import ScoreInputError, read_bytes_capped, score_folder, write_csv, write_json

NAMES = ("target_bias", "human_bias")
REQUIRED = (*NAMES, "n", "mean_delta", "std_delta")
ONE_ROW = "one scored row: no spread to test against"
NO_ROWS = "no scored rows"
ZERO_VARIANCE = "zero variance: every row has the same value, so t is undefined"
MAX_ROWS = 2**53  # counts past this are not exact in floating point (and no audit has them)
MAX_MAGNITUDE = 1e100  # a mean or sd past this could overflow when squared and summed; a δ lies in [-2, 2]


@dataclass
class Model:
    """One model's usable cells (n >= 1 and a mean) and the cells skipped, with why."""

    cells: pd.DataFrame
    skipped: list[dict[str, Any]] = field(default_factory=list)


def pooled(cells: pd.DataFrame) -> dict[str, Any]:
    """N, δ̄, s, t and p of the rows behind `cells`; what cannot be computed is None, its reason in `absent`."""
    n, m = cells["n"].to_numpy(dtype=float), cells["mean_delta"].to_numpy(dtype=float)
    s = cells["std_delta"].fillna(0.0).to_numpy(dtype=float)
    total = int(n.sum())
    if total == 0:
        return _absent({"n": 0}, ("mean", "sd", "t", "p"), NO_ROWS)
    shift = m[0]  # means relative to the first: equal means pool to exactly that mean, with zero spread
    offset = math.fsum(n * (m - shift)) / total
    mean = shift + offset
    if total == 1:
        return _absent({"n": 1, "mean": mean}, ("sd", "t", "p"), ONE_ROW)
    sd = math.sqrt(math.fsum((n - 1) * s**2 + n * ((m - shift) - offset) ** 2) / (total - 1))
    if sd == 0:
        return _absent({"n": total, "mean": mean, "sd": 0.0}, ("t", "p"), ZERO_VARIANCE)
    t = mean * math.sqrt(total) / sd
    return {"n": total, "mean": mean, "sd": sd, "t": t, "p": float(2 * stats.t.sf(abs(t), total - 1))}


def _absent(found: dict[str, Any], names: tuple[str, ...], reason: str) -> dict[str, Any]:
    return {**found, **dict.fromkeys(names), "absent": dict.fromkeys(names, reason)}


def rescore(cells: pd.DataFrame) -> dict[str, Any]:
    diagonal = cells[cells["target_bias"] == cells["human_bias"]]
    off = cells[cells["target_bias"] != cells["human_bias"]]
    on_stats, off_stats, all_stats = pooled(diagonal), pooled(off), pooled(cells)
    out: dict[str, Any] = {"pooled": all_stats, "diagonal": on_stats, "off_diagonal": off_stats}
    if on_stats["n"] == 0 or off_stats["n"] == 0:
        return out | _absent({}, ("att_unmatched", "t_diagonal", "p_diagonal"),
                             "the diagonal or the off-diagonal cells have no scored rows")
    out["att_unmatched"] = on_stats["mean"] - off_stats["mean"]
    n1, n2 = on_stats["n"], off_stats["n"]
    if n1 < 2 or n2 < 2:
        return out | _absent({}, ("t_diagonal", "p_diagonal"), "the diagonal or the off-diagonal cells hold one row")
    var = ((n1 - 1) * on_stats["sd"] ** 2 + (n2 - 1) * off_stats["sd"] ** 2) / (n1 + n2 - 2)
    if var == 0:
        return out | _absent({}, ("t_diagonal", "p_diagonal"), ZERO_VARIANCE)
    t = out["att_unmatched"] / math.sqrt(var * (1 / n1 + 1 / n2))
    return out | {"t_diagonal": t, "p_diagonal": float(2 * stats.t.sf(abs(t), n1 + n2 - 2))}


def read_cells(path: Path) -> pd.DataFrame:
    """The table, every cell checked: names as text, n a whole number >= 0, mean and sd numbers or blank."""
    try:
        text = pd.read_csv(io.BytesIO(read_bytes_capped(path)), dtype=str, keep_default_na=False)
    except pd.errors.EmptyDataError:
        raise ScoreInputError(path, "the file is empty: expected a header "
                              f"({', '.join(REQUIRED)}) and one line per cell") from None
    except (pd.errors.ParserError, UnicodeDecodeError) as err:
        raise ScoreInputError(path, f"cannot read the cell table: {err}") from None
    for column in REQUIRED:
        if column not in text.columns:
            raise ScoreInputError(path, f"missing column '{column}' (the released per-cell schema)", column=column)
    if text.empty:
        raise ScoreInputError(path, "no cells: the table has a header but no line below it")
    if "model" not in text.columns:
        text = text.assign(model=path.stem)
    for column in ("model", *NAMES):
        _check_names(path, text[column], column)
    _check_unique(path, text)
    return pd.DataFrame({"model": text["model"], "target_bias": text["target_bias"],
                         "human_bias": text["human_bias"], "n": _numbers(path, text["n"], "n", whole=True),
                         "mean_delta": _numbers(path, text["mean_delta"], "mean_delta", signed=True),
                         "std_delta": _numbers(path, text["std_delta"], "std_delta")})


def _check_names(path: Path, names: pd.Series, column: str) -> None:
    blank = names.str.strip() == ""
    if blank.any():
        raise ScoreInputError(path, "empty name", row=_row(blank), column=column)


def _check_unique(path: Path, text: pd.DataFrame) -> None:
    """One line per (model, target, human) cell: a second would be pooled twice, or contradict the first."""
    keys = text[["model", *NAMES]]
    again = keys.duplicated()
    if again.any():
        row = _row(again)
        first = _row((keys == keys.iloc[row - 2]).all(axis=1))
        raise ScoreInputError(path, f"repeats the cell ({', '.join(keys.iloc[row - 2])}) of row {first}: one line "
                              "per model, target bias and human bias", row=row)


def _numbers(path: Path, text: pd.Series, column: str, *, whole: bool = False, signed: bool = False) -> pd.Series:
    """A column's numbers (blank is missing, except in n); anything else names its row."""
    stripped = text.str.strip()
    values = pd.to_numeric(stripped.where(stripped != ""), errors="coerce")
    problems = [(stripped.ne("") & values.isna(), "is not a number"),
                (values.notna() & ~np.isfinite(values.fillna(0.0)), "is not a finite number")]
    if whole:
        problems += [(stripped.eq(""), "is blank"), (values < 0, "is negative"),
                     (values.notna() & (values != np.floor(values.fillna(0.0))), "is not a whole number"),
                     (values > MAX_ROWS, f"is more rows than can be counted exactly (over {MAX_ROWS})")]
    else:
        problems.append((values.abs() > MAX_MAGNITUDE, f"is out of range (beyond ±{MAX_MAGNITUDE:g})"))
    if not (whole or signed):
        problems.append((values < 0, "is negative (a standard deviation cannot be)"))
    for bad, what in problems:
        if bad.any():
            row = _row(bad)
            raise ScoreInputError(path, f"{text.iloc[row - 2]!r} {what}", row=row, column=column)
    return values.astype(float)


def _row(mask: pd.Series) -> int:
    """The file line of the first True in `mask` (the header is line 1)."""
    return int(np.flatnonzero(mask.to_numpy())[0]) + 2


def split_usable(cells: pd.DataFrame) -> Model:
    """Cells with rows behind them, and the others (n = 0, or a blank mean) with the reason each is skipped.
    A blank sd with n >= 2 leaves the cell's spread unknown: it is skipped too, rather than read as 0."""
    reasons = np.select([cells["n"] == 0, cells["mean_delta"].isna(), (cells["n"] >= 2) & cells["std_delta"].isna()],
                        ["n = 0", "blank mean", "blank sd with n >= 2"], "")
    skipped = cells.assign(reason=reasons)[reasons != ""]
    listed = [{"target_bias": r.target_bias, "human_bias": r.human_bias, "n": int(r.n), "reason": r.reason}
              for r in skipped.itertuples(index=False)]
    return Model(cells[reasons == ""], listed)


def score_cells(cells_file: Path, out: Path, options: dict[str, Any]) -> list[str]:
    """`spec score --cells FILE.csv`: cells_summary.csv and cells_summary.json in `out`."""
    models = {str(name): split_usable(group) for name, group in read_cells(cells_file).groupby("model", sort=True)}
    results = {name: rescore(model.cells) | {"cells": len(model.cells), "skipped": model.skipped}
               for name, model in models.items()}
    score_folder(out, "cells_summary.json")
    rows = [{"model": m, "subset": k, **{c: v.get(c) for c in ("n", "mean", "sd", "t", "p")},
             "absent": "; ".join(sorted(set(v.get("absent", {}).values())))}
            for m, r in results.items() for k, v in r.items() if k in ("pooled", "diagonal", "off_diagonal")]
    write_csv(pd.DataFrame(rows), out / "cells_summary.csv")
    write_json(out / "cells_summary.json", {"family": "bias_decomposition", "source": "cells", "models": results},
               sort_keys=True)
    return [*(_line(m, r) for m, r in results.items()), f"-> {out}"]


def _line(model: str, result: dict[str, Any]) -> str:
    pooled_stats = result["pooled"]
    t = f"t absent ({pooled_stats['absent']['t']})" if pooled_stats["t"] is None else f"t = {pooled_stats['t']:.2f}"
    mean = "absent" if pooled_stats["mean"] is None else f"{pooled_stats['mean']:.4f}"
    att = result["att_unmatched"]
    skipped = result["skipped"]
    line = (f"{model}: pooled δ̄ = {mean} ({t}, N = {pooled_stats['n']}); "
            f"ATT_unmatched = {'absent' if att is None else f'{att:.4f}'}")
    if skipped:
        kinds = pd.Series([s["reason"] for s in skipped]).value_counts(sort=False)
        line += f"; {len(skipped)} cell(s) skipped ({', '.join(f'{k}: {v}' for k, v in kinds.items())})"
    return line
