"""Intervals and tests of a logprob run from the variation between its items.

A logprob row gives the probabilities of the answer tokens, an exactly known number that stands for all
of its `samples`; counting it as `samples` trials would make up a sampling error it does not have (an
exactly known 0.3 got a Wilson interval of [0.002, 0.826] from one row). Here each arm of a condition is
its items: a share is the ratio mean Σw / Σm over them (w expected choices, m samples), its standard
error the ratio estimator's over items (intervals.item_mean), intervals and tests Student t with k − 1
degrees of freedom (Welch–Satterthwaite for a difference of two arms), and the Wald variance of a log
odds ratio the delta method on that standard error. An arm with fewer than two items has no
between-item variation: its intervals and tests are absent.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from spec_audits.sdk import hypothesis, intervals

ARMS = {"0": "baseline", "A": "toward_A", "B": "toward_B"}


@dataclass(frozen=True)
class Arms:
    """Per arm code (0, A, B): trials Σm, items k, the share choosing B and its between-item error."""

    total: dict[str, np.ndarray]
    items: dict[str, np.ndarray]
    share_b: dict[str, np.ndarray]
    se: dict[str, np.ndarray]

    def df(self, code: str) -> np.ndarray:
        return self.items[code] - 1

    def log_odds_variances(self, c: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        """Delta-method variance of ln((E_B + ½)/(E_A + ½)) per arm, with Var E_B = (Σm · se)²."""
        return {code: ((1 / (c[f"c_{code}_B"] + 0.5) + 1 / (c[f"c_{code}_A"] + 0.5)) * self.total[code]
                       * self.se[code]) ** 2 for code in "0AB"}

    def effect(self, d: str, effect: np.ndarray,
               alpha: float) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Welch t test and t interval of Δ_d, the difference of two independent item means."""
        se = np.sqrt(self.se[d] ** 2 + self.se["0"] ** 2)
        df = intervals.welch_df(self.se[d], self.df(d), self.se["0"], self.df("0"))
        t, p = hypothesis.t_test(effect, se, df)
        lo, hi = intervals.t_interval(effect, se, df, alpha, (-1.0, 1.0))
        return t, p, lo, hi

    def baseline(self, f0_b: np.ndarray, alpha: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """One-sample t test of f0(B) against ½ and its t interval."""
        _, p = hypothesis.t_test(f0_b - 0.5, self.se["0"], self.df("0"))
        lo, hi = intervals.t_interval(f0_b, self.se["0"], self.df("0"), alpha)
        return p, lo, hi

    def why_absent(self, i: int) -> list[str]:
        return [f"{ARMS[code]}: one item, so no between-item interval or test" for code in "0AB"
                if self.items[code][i] == 1]


def arms(frame: pd.DataFrame, source: str) -> Arms | None:
    """The item moments of a logprob run's counts table (None for sampled counts)."""
    if source != "expected" or "v_0_items" not in frame.columns:
        return None
    total, items, share, se = {}, {}, {}, {}
    for code in "0AB":
        v = {s: frame[f"v_{code}_{s}"].to_numpy(float) for s in ("items", "m2", "B2", "Bm")}
        total[code] = frame[f"c_{code}_A"].to_numpy(float) + frame[f"c_{code}_B"].to_numpy(float)
        items[code] = v["items"]
        share[code], se[code], _ = intervals.item_mean(total[code], frame[f"c_{code}_B"].to_numpy(float),
                                                       v["B2"], v["Bm"], v["m2"], v["items"])
    return Arms(total, items, share, se)
