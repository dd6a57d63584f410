"""Position bias of an influence run: the share of answers that pick the option shown first, by display
order, from the shared position-bias statistics (spec_audits.stats.position). Pooling the orders, as f0(B)
does, averages this bias away: a model that always answers "A" has f0(B) = ½ and position share 1.

Written per condition (the baseline's, in conditions.csv, where it qualifies neutrality), per item and
condition (positions.csv) and per benchmark and arm (summary.json `position`). A design with one display
order, or a suite that does not record which option it shows first, has no position statistics.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from spec_audits.families.influence.score.counts import CONDITION_CODE, LABELS, ORDER_COUNTS
from spec_audits.families.influence.score.flips import ITEM_COLUMNS
from spec_audits.families.influence.score.groups import group_sums, taken
from spec_audits.families.influence.score.summary import rate
from spec_audits.sdk import position_bias

COLUMNS = ["position_0_firstA", "position_0_firstB", "position_0", "position_0_lo", "position_0_hi", "p_position_0"]
ONE_ORDER = "baseline trials shown in one display order only"


def baseline(out: pd.DataFrame, frame: pd.DataFrame, source: str, alpha: float, pooled: bool) -> None:
    """The baseline's position columns of conditions.csv (empty where the orders are not known)."""
    if not all(c in frame.columns for c in ORDER_COUNTS):
        for column in COLUMNS:
            out[column] = np.nan
        return
    c = {name: frame[name].to_numpy(float) for name in ORDER_COUNTS}
    for name, value in c.items():
        out[name] = value
    moments = None
    if source == "expected" and "v_0_items_firstA" in frame.columns:
        moments = {f"{s}_{g}": frame[f"v_0_{s}_first{g}"].to_numpy(float)
                   for g in "AB" for s in ("items", "m2", "A2", "Am")}
    found = position_bias(c["c_0_A_firstA"], c["c_0_A_firstA"] + c["c_0_B_firstA"], c["c_0_B_firstB"],
                   c["c_0_A_firstB"] + c["c_0_B_firstB"], alpha, moments, pooled)
    for column, key in zip(COLUMNS, ("firstA", "firstB", "position", "lo", "hi", "p"), strict=True):
        out[column] = found[key]


def why_absent(out: pd.DataFrame, i: int, no_order: str | None) -> str:
    if no_order is not None or "c_0_A_firstA" not in out.columns:
        return no_order or "the display order is not recorded"
    first_a, first_b = (np.isnan(out[f"position_0_first{g}"].to_numpy(float)[i]) for g in "AB")
    if first_a and first_b:
        return "the display order is not recorded"
    if first_a or first_b:
        return ONE_ORDER
    return "fewer than two baseline items in a display order"


def item_table(trials: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    """positions.csv: per condition and item (a size pair or a data row, pooled over display orders), the
    trials and first-shown choices with each group shown first, the two shares and their mean. A shared
    baseline's rows read influence `none`."""
    rows = trials["first"].notna().to_numpy() if "first" in trials.columns else np.zeros(len(trials), bool)
    items = [c for c in ITEM_COLUMNS if c in trials.columns]
    by = keys + LABELS + ["condition"] + items
    w_a, w_b = taken(trials["w_A"].to_numpy(float), rows), taken(trials["w_B"].to_numpy(float), rows)
    shown_a = taken((trials["first"] == "A").to_numpy(), rows) if rows.any() else np.zeros(0, bool)
    keyed = trials[by].assign(influence=trials["influence"].fillna("none"))
    sums = (("n_firstA", lambda: _times(w_a + w_b, shown_a)), ("k_firstA", lambda: w_a * shown_a),
            ("n_firstB", lambda: _times(w_a + w_b, ~shown_a)), ("k_firstB", lambda: w_b * ~shown_a))
    table = group_sums(keyed, by, ((name, value()) for name, value in sums), rows)
    with np.errstate(invalid="ignore", divide="ignore"):
        table["position_firstA"] = np.where(table["n_firstA"] > 0, table["k_firstA"] / table["n_firstA"], np.nan)
        table["position_firstB"] = np.where(table["n_firstB"] > 0, table["k_firstB"] / table["n_firstB"], np.nan)
    table["position"] = (table["position_firstA"] + table["position_firstB"]) / 2
    return table


def _times(values: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """`values * mask`, the very floats, in place: no second trial-long array."""
    return np.multiply(values, mask, out=values)


def summary(trials: pd.DataFrame, rows: np.ndarray, conditions: pd.DataFrame, source: str, alpha: float,
            reason: str | None) -> dict[str, Any]:
    """One benchmark's position statistics (its trials: `rows`) per arm (baseline, toward_A, toward_B, all) and how
    many baselines are position-biased; {"absent": reason} where no order is known."""
    known = rows & trials["first"].notna().to_numpy() if "first" in trials.columns else np.zeros(len(trials), bool)
    if not known.any() or trials["first"][known].nunique() < 2:
        return {"absent": reason or "every prompt is shown in one display order"}
    arms = {name: known & (trials["condition"] == name).to_numpy() for name in CONDITION_CODE} | {"all": known}
    found: dict[str, Any] = {name: _arm(trials, arm, source, alpha) for name, arm in arms.items() if arm.any()}
    return found | {"position_biased_baselines": _biased(conditions, alpha)}


def from_counts(conditions: pd.DataFrame, alpha: float, reason: str | None) -> dict[str, Any]:
    """A counts table's position statistics: its baseline's, from the display-order columns it has."""
    if reason is not None or "c_0_A_firstA" not in conditions.columns:
        return {"absent": reason or "the display order is not recorded"}
    c = {name: float(conditions[name].sum()) for name in ORDER_COUNTS}
    found = _stats(c["c_0_A_firstA"], c["c_0_A_firstA"] + c["c_0_B_firstA"], c["c_0_B_firstB"],
                   c["c_0_A_firstB"] + c["c_0_B_firstB"], alpha, None)
    return {"baseline": found, "position_biased_baselines": _biased(conditions, alpha)}


def _biased(conditions: pd.DataFrame, alpha: float) -> dict[str, Any]:
    flags = conditions["position_biased"]
    return rate(int(flags.fillna(False).sum()), int(flags.notna().sum()), alpha)


def _arm(trials: pd.DataFrame, rows: np.ndarray, source: str, alpha: float) -> dict[str, Any]:
    """One arm's statistics from its trials, `rows` (with the between-item sums in a logprob run)."""
    w_a, w_b = taken(trials["w_A"].to_numpy(float), rows), taken(trials["w_B"].to_numpy(float), rows)
    m = w_a + w_b
    shown = {g: taken((trials["first"] == g).to_numpy(), rows) for g in "AB"}
    moments: dict[str, float] = {}
    for g, mask in shown.items():
        wa = w_a * mask
        moments |= {f"items_{g}": float(((m > 0) & mask).sum()), f"m2_{g}": float((m**2 * mask).sum()),
                    f"A2_{g}": float((wa**2).sum()), f"Am_{g}": float((wa * m).sum())}
    return _stats(float(w_a[shown["A"]].sum()), float(m[shown["A"]].sum()), float(w_b[shown["B"]].sum()),
                  float(m[shown["B"]].sum()), alpha, moments if source == "expected" else None)


def _stats(k_a: float, n_a: float, k_b: float, n_b: float, alpha: float,
           moments: dict[str, float] | None) -> dict[str, Any]:
    """summary.json's entry for one arm: the first-shown share with each group first, and over both."""
    arrays = None if moments is None else {k: np.array([v]) for k, v in moments.items()}
    found = {k: _value(v) for k, v in position_bias(np.array([k_a]), np.array([n_a]), np.array([k_b]),
                                                       np.array([n_b]), alpha, arrays).items()}
    return {"first_A": {"k": k_a, "n": n_a, "share": found["firstA"]},
            "first_B": {"k": k_b, "n": n_b, "share": found["firstB"]},
            "position": found["position"], "ci": [found["lo"], found["hi"]], "p": found["p"]}


def _value(array: np.ndarray) -> float | None:
    value = float(array[0])
    return None if np.isnan(value) else value
