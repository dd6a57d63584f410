"""Across-model tests: sign tests per group (methods §5.6) and ranking changes (§5.8, an extension)."""

from __future__ import annotations

import pandas as pd
from scipy.stats import kendalltau

from spec_audits.sdk import sign_test


def sign_tests(gaps: pd.DataFrame, by: list[str] | None = None) -> pd.DataFrame:
    """Per group: models whose Net moved adversely (gap > 0) vs favourably (gap < 0); ties dropped;
    two-sided binomial test against p = 0.5."""
    keys = by or ["consequences", "difficulty", "dimension", "group"]
    rows = []
    for key, part in gaps.groupby(keys, dropna=False):
        adverse, favourable = int((part["gap"] > 0).sum()), int((part["gap"] < 0).sum())
        p_value = sign_test(adverse, favourable)
        rows.append(dict(zip(keys, key, strict=True)) | {"adverse": adverse, "favourable": favourable, "p": p_value})
    return pd.DataFrame(rows)


def rank_change(scores: pd.DataFrame, before: str, after: str) -> tuple[float, float, pd.DataFrame]:
    """Kendall tau-b between model rankings by two score columns (higher = better rank), its p-value,
    and each model's rank under both and its displacement (positive: moved down)."""
    tau, p_value = kendalltau(scores[before], scores[after])
    ranked = scores.assign(
        rank_before=scores[before].rank(ascending=False, method="min"),
        rank_after=scores[after].rank(ascending=False, method="min"),
    )
    return float(tau), float(p_value), ranked.assign(displacement=ranked["rank_after"] - ranked["rank_before"])
