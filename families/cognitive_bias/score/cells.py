"""`spec score --cells FILE.csv`: re-score a published per-cell table (the released schema, one file per
model or a `model` column) from the cell moments alone, so that a paper's Table 1 can be checked.

Pooled over cells i with n_i rows, mean m_i and sd s_i (NaN when n_i = 1, read as 0 spread):
  δ̄ = Σ n_i m_i / N,   s² = Σ [(n_i − 1) s_i² + n_i (m_i − δ̄)²] / (N − 1),   t = δ̄ √N / s
The same for the diagonal (target = human) and the off-diagonal cells, with Student's t between them
(pooled variance), and ATT_unmatched = δ̄_diag − δ̄_off.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pandas as pd
from scipy import stats

from runner.score_input import ScoreInputError

REQUIRED = ("target_bias", "human_bias", "n", "mean_delta", "std_delta")


def pooled(cells: pd.DataFrame) -> dict[str, float]:
    n, m = cells["n"].to_numpy(dtype=float), cells["mean_delta"].to_numpy(dtype=float)
    s = cells["std_delta"].fillna(0.0).to_numpy(dtype=float)
    total = n.sum()
    mean = float((n * m).sum() / total) if total else math.nan
    if total < 2:
        return {"n": total, "mean": mean, "sd": math.nan, "t": math.nan, "p": math.nan}
    sd = math.sqrt(float(((n - 1) * s**2 + n * (m - mean) ** 2).sum() / (total - 1)))
    t = mean * math.sqrt(total) / sd if sd > 0 else math.nan
    p = float(2 * stats.t.sf(abs(t), total - 1)) if not math.isnan(t) else math.nan
    return {"n": total, "mean": mean, "sd": sd, "t": t, "p": p}


def rescore(cells: pd.DataFrame) -> dict[str, Any]:
    diagonal = cells[cells["target_bias"] == cells["human_bias"]]
    off = cells[cells["target_bias"] != cells["human_bias"]]
    on_stats, off_stats, all_stats = pooled(diagonal), pooled(off), pooled(cells)
    out = {"pooled": all_stats, "diagonal": on_stats, "off_diagonal": off_stats,
           "att_unmatched": on_stats["mean"] - off_stats["mean"]}
    n1, n2 = on_stats["n"], off_stats["n"]
    if n1 >= 2 and n2 >= 2:
        var = ((n1 - 1) * on_stats["sd"] ** 2 + (n2 - 1) * off_stats["sd"] ** 2) / (n1 + n2 - 2)
        t = out["att_unmatched"] / math.sqrt(var * (1 / n1 + 1 / n2))
        out |= {"t_diagonal": t, "p_diagonal": float(2 * stats.t.sf(abs(t), n1 + n2 - 2))}
    return out


def read_cells(path: Path) -> pd.DataFrame:
    try:
        cells = pd.read_csv(path)
    except (OSError, pd.errors.ParserError, UnicodeDecodeError) as err:
        raise ScoreInputError(path, f"cannot read the cell table: {err}") from None
    for column in REQUIRED:
        if column not in cells.columns:
            raise ScoreInputError(path, f"missing column '{column}' (the released per-cell schema)", column=column)
    for number, row in enumerate(cells.itertuples(index=False), start=2):
        if not (isinstance(row.n, int | float) and row.n >= 1 and float(row.n).is_integer()):
            raise ScoreInputError(path, f"n must be a whole number >= 1, got {row.n!r}", row=number, column="n")
    return cells if "model" in cells.columns else cells.assign(model=path.stem)


def score_cells(cells_file: Path, out: Path, options: dict[str, Any]) -> list[str]:
    """`spec score --cells FILE.csv`: cells_summary.csv and summary.json in `out`."""
    cells = read_cells(cells_file)
    results = {str(model): rescore(group) for model, group in cells.groupby("model", sort=True)}
    out.mkdir(parents=True, exist_ok=True)
    rows = [{"model": m, "subset": k, **v} for m, r in results.items() for k, v in r.items() if isinstance(v, dict)]
    pd.DataFrame(rows).to_csv(out / "cells_summary.csv", index=False)
    text = json.dumps({"family": "bias_decomposition", "source": "cells", "models": results}, indent=2,
                      sort_keys=True, default=float)
    (out / "cells_summary.json").write_text(text.replace("NaN", "null") + "\n", encoding="utf-8")
    lines = [f"{m}: pooled δ̄ = {r['pooled']['mean']:.4f} (t = {r['pooled']['t']:.2f}, N = {r['pooled']['n']:.0f}); "
             f"ATT_unmatched = {r['att_unmatched']:.4f}" for m, r in results.items()]
    return [*lines, f"-> {out}"]
