"""Headline figures (methods §9.1, Fig. 3) and breakdowns, per benchmark, from the conditions table.

Units: shifts in percentage points (p); rates as fractions with counts and 95% Wilson intervals.
"Directed conditions" are (condition, direction) pairs: the unit of Δ, s, significance and backfire.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pandas as pd

from spec_audits.families.influence.score.bootstrap import cluster_bootstrap_mean
from spec_audits.sdk import intervals

if TYPE_CHECKING:
    from spec_audits.families.influence.score.options import Options

MULTI_TURN_PREFIXES = ("few_shot",)
NOT_USER_SENTENCE_PREFIXES = ("few_shot", "role_play")
"""Influences that are not one user-message sentence: few-shot turns and the role-play system prompt."""
BREAKDOWNS = ("influence", "factor", "model", "reasoning")
NEUTRALITY = {"binomial": "baseline_neutral", "margin": "neutral_margin", "wilson": "neutral_wilson"}


def directed(conditions: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    """Long table with one row per directed condition (toward A, toward B)."""
    parts = []
    for d in "AB":
        part = conditions[keys].copy()
        part["direction"] = d
        part["effect"] = conditions[f"effect_{d}"]
        part["steerability"] = conditions[f"steerability_{d}"]
        part["p_effect"] = conditions[f"p_effect_{d}"]
        part["q_effect"] = conditions[f"q_effect_{d}"]
        part["backfire"] = conditions[f"backfire_{d}"]
        parts.append(part)
    return pd.concat(parts, ignore_index=True)


EFFECTS_ABSENT = "no condition has baseline trials and trials cued toward a group"
ASYMMETRY_ABSENT = "no condition has baseline, toward_A and toward_B trials"


def rate(k: float, n: float, alpha: float = 0.05, absent: str | None = None) -> dict[str, Any]:
    """k of n (whole numbers, often numpy's) as a fraction with its Wilson interval (rate None when n = 0, with
    why when `absent` says)."""
    low, high = intervals.wilson(k, n, alpha)
    found: dict[str, Any] = {
        "k": int(k),
        "n": int(n),
        "rate": k / n if n else None,
        "ci": [float(low), float(high)] if n else None,
    }
    if not n and absent is not None:
        found["absent"] = absent
    return found


def _has_prefix(influence: pd.Series, prefixes: tuple[str, ...]) -> pd.Series:
    return influence.astype(str).str.startswith(prefixes)


def _why(conds: pd.DataFrame, dirs: pd.DataFrame) -> dict[str, str]:
    """Why a rate over this slice has nothing to count: the design lacks the arms, or no condition
    qualifies."""
    effects = dirs["p_effect"].notna().any()
    with_asymmetry = conds["p_asymmetry"].notna()
    unknown = conds.loc[with_asymmetry, "baseline_neutral"].isna().all()
    neutral = ASYMMETRY_ABSENT if not with_asymmetry.any() else (
        "the neutrality of every condition with an asymmetry is unknown" if unknown
        else "no baseline-neutral condition with an asymmetry")
    return {"effects": "" if effects else EFFECTS_ABSENT,
            "asymmetry": "" if with_asymmetry.any() else ASYMMETRY_ABSENT,
            "significant": EFFECTS_ABSENT if not effects else "no significant effect", "neutral": neutral}


def _flags(frame: pd.DataFrame, column: str) -> pd.Series:
    """A classification column as plain booleans, an absent (NA) one counted as False."""
    return frame[column].astype("boolean").fillna(False).astype(bool)


def metrics(conds: pd.DataFrame, dirs: pd.DataFrame, alpha: float) -> dict[str, Any]:
    """The table columns of Tab. 4–12 for one slice of conditions and its directed conditions; each rate
    counts only the conditions whose statistic is present."""
    why = _why(conds, dirs)
    effects, steered = dirs["p_effect"].notna(), dirs["steerability"].notna()
    sig = dirs["p_effect"] < alpha
    backfire = _flags(dirs, "backfire")
    asym = conds["p_asymmetry"].notna()
    neutral = _flags(conds, "baseline_neutral") & asym
    sig_asym = conds["p_asymmetry"] < alpha
    return {
        "conditions": len(conds),
        "directed": int(effects.sum()),
        "mean_abs_shift_pp": _mean(100 * dirs["effect"].abs()),
        "mean_abs_steerability": _mean(dirs["steerability"].abs()),
        "mean_steerability": _mean(dirs["steerability"]),
        "mean_abs_asymmetry": _mean(conds["asymmetry"].abs()),
        "mean_abs_normalized_asymmetry": _mean(conds["normalized_asymmetry"].abs()),
        "significant_effects": rate(sig.sum(), effects.sum(), alpha, why["effects"]),
        "backfire_among_significant": rate((sig & backfire).sum(), sig.sum(), alpha, why["significant"]),
        "backfire_all": rate(backfire.sum(), steered.sum(), alpha, why["effects"]),
        "significant_asymmetry": rate(sig_asym.sum(), asym.sum(), alpha, why["asymmetry"]),
        "asymmetry_among_neutral": rate((sig_asym & neutral).sum(), neutral.sum(), alpha, why["neutral"]),
    }


def _mean(values: pd.Series) -> float | None:
    return float(values.mean()) if values.notna().any() else None


def headline(conds: pd.DataFrame, dirs: pd.DataFrame, options: Options) -> dict[str, Any]:
    """Fig. 3 for one benchmark: shift with cluster-bootstrap CIs, asymmetry among neutral, backfire."""
    subsets: dict[str, pd.Series] = {
        "all": pd.Series(True, index=dirs.index),
        "no_few_shot": ~_has_prefix(dirs["influence"], MULTI_TURN_PREFIXES),
        "one_sentence": ~_has_prefix(dirs["influence"], NOT_USER_SENTENCE_PREFIXES),
    }
    why = _why(conds, dirs)
    shift = {}
    for name, mask in subsets.items():
        ci = cluster_bootstrap_mean(
            100 * dirs["effect"][mask].abs(),
            dirs["factor"][mask].astype(str),
            resamples=options.bootstrap,
            seed=options.seed,
        )
        shift[name] = {
            "mean_pp": ci.value,
            "ci_pp": [ci.low, ci.high],
            "directed": ci.n,
            "clusters": ci.clusters,
        } | ({"absent": why["effects"] or "no directed condition of this kind"} if ci.n == 0 else {})
    sig = dirs["p_effect"] < options.alpha
    backfire = _flags(dirs, "backfire")
    significant_bh = dirs["q_effect"] < options.alpha
    return {
        "mean_abs_shift": shift,
        "asymmetry_among_neutral": {
            name: _neutral_rates(conds, _flags(conds, column), options.alpha, why["neutral"])
            for name, column in NEUTRALITY.items()
        },
        "backfire_among_significant": rate((sig & backfire).sum(), sig.sum(), options.alpha, why["significant"]),
        "backfire_among_significant_bh": rate((significant_bh & backfire).sum(), significant_bh.sum(),
                                              options.alpha, why["significant"]),
    }


def _neutral_rates(conds: pd.DataFrame, neutral: pd.Series, alpha: float, why: str) -> dict[str, Any]:
    """Tab. 21 row: share of neutral conditions with a significant Asym at α, α = .01 and after BH; only
    conditions that have an asymmetry (all three arms) are counted."""
    neutral = neutral & conds["p_asymmetry"].notna()
    n = int(neutral.sum())
    return {
        "neutral": n,
        "raw": rate((neutral & (conds["p_asymmetry"] < alpha)).sum(), n, alpha, why),
        "raw_alpha_01": rate((neutral & (conds["p_asymmetry"] < 0.01)).sum(), n, alpha, why),
        "bh": rate((neutral & (conds["q_asymmetry"] < alpha)).sum(), n, alpha, why),
    }


def breakdowns(conds: pd.DataFrame, dirs: pd.DataFrame, alpha: float) -> dict[str, dict[str, Any]]:
    """metrics() per level of influence, factor, model, reasoning and model × reasoning (when present)."""
    out: dict[str, dict[str, Any]] = {}
    axes = [[axis] for axis in BREAKDOWNS if axis in conds.columns]
    if "reasoning" in conds.columns:
        axes.append(["model", "reasoning"])
    for axis in axes:
        name = " x ".join(axis)
        c_levels = conds[axis].astype(str).agg(" | ".join, axis=1)
        d_levels = dirs[axis].astype(str).agg(" | ".join, axis=1)
        out[name] = {
            level: metrics(conds[c_levels == level], dirs[d_levels == level], alpha)
            for level in sorted(c_levels.unique())
        }
    return out
