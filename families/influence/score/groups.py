"""Sums of trial values per group of key columns, as pandas' `groupby(by, dropna=False, sort=True)[...].sum()` gives
them, for the million-trial frames of `spec score`.

pandas groups by several keys through an 8-byte code a trial per key, a combined code, a hash table and a sort of
them: at a million trials the groupbys of counts, flips and positions held more than 250 MB at once. Here each key
is coded as its rank (a categorical's own codes; NaN last, as dropna=False puts it), the ranks combine into one
integer a trial, and each value column is summed by pandas over that one code, in trial order (so the sums are the
very floats `groupby().sum()` makes). The groups come out in the same sorted order, with the same key values.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import pandas as pd


def group_sums(frame: pd.DataFrame, by: list[str], values: Iterable[tuple[str, np.ndarray]],
               rows: np.ndarray | None = None) -> pd.DataFrame:
    """Per group of `by` among `rows` of `frame` (a boolean mask; all rows when None), the sum of each of `values`
    ((name, array over those rows) pairs, made one at a time by a generator if they are many): a frame of the `by`
    columns then the sums, one row per group in sorted order. No copy of the frame's rows is made: each key's ranks
    are taken at the rows."""
    index = _index_type(len(frame))  # 4 bytes a trial below 2^31 trials
    at = np.arange(len(frame), dtype=index) if rows is None else np.flatnonzero(rows).astype(index, copy=False)
    group, first = _groups(frame, by, at)
    sums = {}
    for name, value in values:
        sums[name] = _sum(group, len(first), value)
        del value  # let go before the next value is made: one trial-long array at a time
    return frame[by].iloc[at[first]].reset_index(drop=True).assign(**sums)


def taken(values: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """`values[rows]` (`rows` a boolean mask), or `values` itself, no copy, where every row is taken: a million-trial
    column's copy is 8 MB."""
    return values if rows.all() else values[rows]


def _sum(group: np.ndarray, count: int, value: np.ndarray) -> np.ndarray:
    """Each group's sum of `value`. Whole numbers (a sampled run's counts) sum exactly in any order, so np.bincount
    gives the very floats pandas' compensated sum gives, without its 40 bytes a trial of temporaries; other values
    are summed by pandas, in trial order."""
    if _whole(value):
        return np.bincount(group, value, count)
    groups = pd.Series(pd.Categorical.from_codes(group, categories=pd.RangeIndex(count)))  # grouped by its codes
    return pd.Series(value).groupby(groups, observed=True).sum().to_numpy()


def _whole(value: np.ndarray, block: int = 1 << 16) -> bool:
    """Whether every value is a whole float64 below 2^52 in size (NaN is not), tested a block at a time so that the
    test's temporaries stay small."""
    if value.dtype != np.float64 or not -(2.0**52) < value.min(initial=0.0) <= value.max(initial=0.0) < 2.0**52:
        return False
    return all((np.floor(value[start:start + block]) == value[start:start + block]).all()
               for start in range(0, len(value), block))


def _groups(frame: pd.DataFrame, by: list[str], at: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each row `at`'s group number (groups in the sorted order of their keys) and each group's first row (in `at`)."""
    combined = np.zeros(len(at), dtype=np.int64)
    span = 1
    for name in by:
        rank, count = _rank(frame[name], at)
        if span * count >= 2**62:  # too many key combinations for one integer: number the groups so far first
            combined = np.unique(combined, return_inverse=True)[1].ravel().astype(np.int64)
            span = int(combined.max(initial=-1)) + 1
        combined *= count
        combined += rank
        del rank
        span *= count
    if span * max(len(at), 1) >= 2**63:  # no room for the row beside its key: numbered through a stable argsort
        order = np.argsort(combined, kind="stable")
        combined = combined[order]
    else:
        order = _sort_in_place(combined, len(at))
    new = _starts(combined)
    del combined
    return _numbered(new, order)


def _sort_in_place(combined: np.ndarray, rows: int) -> np.ndarray:
    """Sort `combined` in place and give the rows in that order, ties in row order, as a stable argsort gives them:
    each key carries its row (key * rows + row, unique), so one in-place sort orders both, at 8 bytes a row
    beside the keys while the rows are added (4 after), where an argsort and the sorted copy took 16."""
    combined *= rows
    combined += np.arange(rows, dtype=np.int64)
    combined.sort()
    order = np.empty(rows, dtype=_index_type(rows))
    np.remainder(combined, max(rows, 1), out=order, casting="unsafe")  # the row, below 2^31 when int32: no copy
    combined //= max(rows, 1)
    return order


def _starts(keys: np.ndarray) -> np.ndarray:
    """Where each run of equal sorted keys starts."""
    new = np.empty(len(keys), dtype=bool)
    new[:1] = True
    np.not_equal(keys[1:], keys[:-1], out=new[1:])
    return new


def _numbered(new: np.ndarray, order: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """From where each group starts among the sorted keys and the rows in their order: each row's group number and
    each group's first row (the inverse and index np.unique gives), in int32 below 2^31 rows."""
    number = np.cumsum(new, dtype=_index_type(len(order)))
    number -= 1
    group = np.empty(len(order), dtype=number.dtype)
    group[order] = number
    return group, order[new]


def _index_type(rows: int) -> type[np.signedinteger]:
    return np.int32 if rows < 2**31 else np.int64


def _rank(column: pd.Series, at: np.ndarray) -> tuple[np.ndarray, int]:
    """Rows `at`'s ranks among the column's distinct values (NaN after every value) and how many ranks there are: a
    categorical's codes in their own small type (pandas picks one that holds every code and one more)."""
    if isinstance(column.dtype, pd.CategoricalDtype):
        rank = column.cat.codes.to_numpy()[at]
        count = len(column.cat.categories)
    else:  # ranked among the values at the rows only: the same order, without codes for every row
        rank, distinct = pd.factorize(column.iloc[at], sort=True)
        count = len(distinct)
    rank[rank < 0] = count  # the codes are this call's own: ranked in place
    return rank, count + 1
