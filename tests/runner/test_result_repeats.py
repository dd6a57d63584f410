"""The one rule for a results file that repeats an (item, sample) (runner/score_input.py): which rows repeat an
earlier one, checked against pandas' own `duplicated`, whatever the samples (a stranger's may be up to 2**63 - 1).
Each family's refusal, with its message, is tested with the family (docs/threat-model.md names them)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from spec_audits.runner.score_input import repeated, sample_keys


def _expected(items: np.ndarray, samples: np.ndarray) -> np.ndarray:
    return pd.DataFrame({"item": items, "sample": samples}).duplicated().to_numpy()


def test_repeats_are_pandas_duplicated_for_small_and_huge_samples() -> None:
    rng = np.random.default_rng(7)
    items = rng.integers(0, 50, 2000)
    for top in (3, 2**31 - 1, 2**63 - 1):  # the last two: keys by the samples' rank, no overflow
        samples = rng.choice(np.array([0, 1, top - 1, top], dtype=np.int64), 2000)
        found = repeated(sample_keys(items, samples))
        assert found.any() and (found == _expected(items, samples)).all()


def test_items_whose_key_would_overflow_are_told_apart() -> None:
    """Item 2 sample 0 and item 0 sample 2**63 - 1: item x (top + 1) + sample would wrap both to one int64."""
    items, samples = np.array([2, 0, 2, 0]), np.array([0, 2**63 - 1, 2**63 - 1, 0], dtype=np.int64)
    assert repeated(sample_keys(items, samples)).tolist() == [False, False, False, False]
    assert repeated(sample_keys(np.array([2, 0, 2]), np.array([2**63 - 1, 5, 2**63 - 1]))).tolist() == [
        False, False, True]
