"""group_sums gives what pandas' groupby(by, dropna=False, sort=True).sum() gives: the same groups in the same
order, the same key values and the very same floats (pandas sums each value in trial order)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from spec_audits.families.influence.score.groups import group_sums


def _trials(count: int, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    influence = rng.choice(np.array(["virtue", "shots", None], dtype=object), count)
    return pd.DataFrame({
        "factor": pd.Categorical(rng.choice(["f2", "f1", "f3"], count), categories=["f1", "f2", "f3", "unused"]),
        "influence": influence,  # object, with None: its group comes last
        "n_A": rng.integers(1, 5, count),
        "w": rng.random(count) * 1e3,  # floats whose sum depends on the order they are added in
    })


@pytest.mark.parametrize("whole", [False, True])  # whole numbers (a sampled run's counts) are summed by np.bincount
@pytest.mark.parametrize("masked", [False, True])
def test_sums_are_pandas_groupby_sums(masked: bool, whole: bool) -> None:
    trials = _trials(5000, 7)
    if whole:
        trials["w"] = np.floor(trials["w"] / 100) - 3  # -3.0 ... 6.0
    rows = np.random.default_rng(1).random(len(trials)) < 0.6 if masked else None
    by = ["factor", "influence", "n_A"]
    w = trials["w"].to_numpy()
    found = group_sums(trials, by, [("w", w if rows is None else w[rows]), ("w2", (w**2)[rows if masked else ...])],
                       rows)
    subset = trials if rows is None else trials[rows]
    expected = subset.assign(w2=subset["w"] ** 2).groupby(by, dropna=False, sort=True)[["w", "w2"]].sum()
    pd.testing.assert_frame_equal(found, expected.reset_index(), check_exact=True)
    assert found["influence"].isna().tolist()[-1]  # the None group after every named one


def test_a_nan_is_skipped_as_pandas_skips_it() -> None:
    trials = _trials(50, 4)
    trials["w"] = np.floor(trials["w"])
    trials.loc[3, "w"] = np.nan
    found = group_sums(trials, ["factor"], [("w", trials["w"].to_numpy())])
    expected = trials.groupby(["factor"], observed=True, sort=True)[["w"]].sum().reset_index()
    pd.testing.assert_frame_equal(found, expected, check_exact=True)
    assert not found["w"].isna().any()


def test_no_rows_gives_an_empty_frame_of_the_columns() -> None:
    trials = _trials(10, 3)
    found = group_sums(trials, ["factor"], [("w", np.zeros(0))], np.zeros(len(trials), bool))
    assert list(found.columns) == ["factor", "w"] and found.empty


def test_many_key_combinations_are_numbered_before_they_overflow() -> None:
    """Keys whose distinct values multiply past 2^62 are still grouped exactly (the codes are renumbered)."""
    rng = np.random.default_rng(5)
    frame = pd.DataFrame({f"k{i}": rng.integers(0, 2**20, 3000) for i in range(7)})  # ~2000 distinct each: 2000^7
    frame.iloc[1000:2000] = frame.iloc[:1000].to_numpy()  # repeated keys, so that groups hold several rows
    values = np.arange(len(frame), dtype=float)
    found = group_sums(frame, list(frame.columns), [("v", values)])
    expected = frame.assign(v=values).groupby(list(frame.columns), sort=True)["v"].sum().reset_index()
    pd.testing.assert_frame_equal(found, expected, check_exact=True)
    assert len(found) == 2000
