"""Position bias: whether the answer follows the option's meaning or the slot it is shown in.

A design that shows two options in both display orders can tell a preference for an option from a preference
for a slot: with option A shown first the first-shown share is f(A | A first), with B first it is
f(B | B first). Their mean is the position share (½: no position bias; 1: always the first shown; 0: always
the second), and it departs from ½ exactly when f(A | A first) ≠ f(A | B first), which is what is tested:
the two-proportion z of those two frequencies in a sampled run (its Newcombe interval, mapped to the share,
is the interval), Welch's t over items in a logprob run. Every family that shows both orders reports it
with this function (docs/scoring.md, "Position bias").
"""

from __future__ import annotations

import numpy as np

from spec_audits.stats.hypothesis import t_test, two_proportion_z
from spec_audits.stats.intervals import item_mean, newcombe, t_interval, welch_df


def position_bias(k_a: np.ndarray, n_a: np.ndarray, k_b: np.ndarray, n_b: np.ndarray, alpha: float,
                  moments: dict[str, np.ndarray] | None = None, pooled: bool = True,
                  same_b: np.ndarray | None = None) -> dict[str, np.ndarray]:
    """Position statistics from the first-shown choices k_g of n_g answers shown with option g first.

    `same_b` is how often the answers shown B first chose A (n_b - k_b, the default, with two options).
    `moments` (a logprob run: items_g, m2_g, A2_g, Am_g per order) switches to between-item errors.
    Returns firstA, firstB, position, lo, hi and p, NaN where an order has no answer."""
    with np.errstate(invalid="ignore", divide="ignore"):
        first_a, first_b = np.where(n_a > 0, k_a / n_a, np.nan), np.where(n_b > 0, k_b / n_b, np.nan)
    chose_a_when_b = n_b - k_b if same_b is None else same_b
    if moments is None:
        _, p = two_proportion_z(k_a, n_a, chose_a_when_b, n_b, pooled=pooled)
        lo, hi = newcombe(k_a, n_a, chose_a_when_b, n_b, alpha)
    else:
        p, lo, hi = _item_difference(first_a + first_b - 1, (n_a, k_a), (n_b, chose_a_when_b), moments, alpha)
    both = (n_a > 0) & (n_b > 0)
    return {"firstA": first_a, "firstB": first_b, "position": np.where(both, (first_a + first_b) / 2, np.nan),
            "lo": np.where(both, (1 + lo) / 2, np.nan), "hi": np.where(both, (1 + hi) / 2, np.nan),
            "p": np.where(both, p, np.nan)}


def _item_difference(diff: np.ndarray, shown_a: tuple[np.ndarray, np.ndarray], shown_b: tuple[np.ndarray, np.ndarray],
                     moments: dict[str, np.ndarray], alpha: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Welch t test and interval of f(A | A first) − f(A | B first) over the items of each order."""
    means = [item_mean(n, k, moments[f"A2_{g}"], moments[f"Am_{g}"], moments[f"m2_{g}"], moments[f"items_{g}"])
             for g, (n, k) in (("A", shown_a), ("B", shown_b))]
    se = np.sqrt(means[0][1] ** 2 + means[1][1] ** 2)
    df = welch_df(means[0][1], means[0][2], means[1][1], means[1][2])
    _, p = t_test(diff, se, df)
    lo, hi = t_interval(diff, se, df, alpha, (-1.0, 1.0))
    return p, lo, hi
