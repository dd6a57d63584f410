"""Power, minimum detectable effects and sample sizes for a difference between two arms of clustered answers.

Every statistic `spec plan` sizes is, or is planned as, a difference between the mean answers of two arms
(a level and its reference, an intervention and the baseline), the answers clustered by scenario. Its
variance is

    Var = unit_var * DEFF * (1 / n1 + 1 / n0),   DEFF = 1 + (m - 1) * icc,

with n1 and n0 the answers in the two arms, m the answers per arm and cluster (n1 + n0) / (a G) over G
clusters each holding answers of a arms (2: a scenario asked at the level and at the reference; 1: a
prompt, whose samples are all in one arm), unit_var the variance of one answer and icc the intra-cluster
correlation. A pilot run gives unit_var and icc (`from_pilot`, `from_one_arm`: the design effect is the
clustered variance over the independent one); without one, or where it cannot tell (and `spread` says
why: `pilot_spread`), they are stated assumptions (`Assumed`). The minimum detectable
effect is (t_{1-a/2} + t_{power}) * SE with G - 1 degrees of freedom (the clustered interval's), at the
level BH holds a single effect to among the statistics tested together (`bh_level`). The icc a pilot
measures is pooled over the statistics (`pool_icc`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
from scipy import stats

from spec_audits.stats.paired import clustered_se, contrast_influence, mean_influence

PILOT = "pilot"  # how a Variance's source starts when a pilot run measured it
REACH = 1 << 16  # the largest multiple of the current size a plan considers


@dataclass(frozen=True)
class Variance:
    """How one statistic's variance is computed; `source` says where unit_var and icc come from."""

    statistic: str
    n1: int  # answers in the arm compared (the level, the intervention)
    n0: int  # answers in the arm it is compared with (the reference, the baseline)
    clusters: int
    unit_var: float
    icc: float
    source: str
    arms_per_cluster: int = 2  # 2: every cluster holds answers of both arms; 1: of one arm only
    measured: bool = False  # icc estimated from a pilot (pool_icc pools these)

    def per_cluster(self) -> float:
        """m: answers per arm and cluster."""
        return (self.n1 + self.n0) / (self.arms_per_cluster * max(self.clusters, 1))

    def design_effect(self) -> float:
        return 1 + max(self.per_cluster() - 1, 0.0) * self.icc

    def se(self) -> float:
        if self.n1 < 1 or self.n0 < 1:
            return math.inf
        return math.sqrt(self.unit_var * self.design_effect() * (1 / self.n1 + 1 / self.n0))

    def scaled(self, scenarios: int = 1, samples: int = 1) -> Variance:
        """The same statistic with `scenarios` times the clusters and `samples` times the answers per cell."""
        k = scenarios * samples
        return replace(self, n1=self.n1 * k, n0=self.n0 * k, clusters=self.clusters * scenarios)


def _df(clusters: int) -> float:
    return clusters - 1 if clusters >= 2 else math.inf


def mde(variance: Variance, alpha: float, power: float) -> float:
    """The smallest true difference found significant (two-sided, level alpha) with probability `power`."""
    df = _df(variance.clusters)
    return float((stats.t.ppf(1 - alpha / 2, df) + stats.t.ppf(power, df)) * variance.se())


def power_at(variance: Variance, effect: float, alpha: float) -> float:
    """The probability that a two-sided t test at level alpha finds `effect` (noncentral t, G - 1 df)."""
    df, se = _df(variance.clusters), variance.se()
    if not math.isfinite(se) or se <= 0:
        return math.nan
    crit, shift = stats.t.ppf(1 - alpha / 2, df), abs(effect) / se
    return float(stats.nct.sf(crit, df, shift) + stats.nct.cdf(-crit, df, shift))


def needed(variance: Variance, effect: float, alpha: float, power: float, by: str) -> int | None:
    """The smallest multiple k of the scenarios (by="scenarios") or of the samples per cell (by="samples")
    whose MDE is at most `effect`; None when no k up to REACH gets there (more samples alone cannot beat
    the clustering: the MDE then tends to a floor set by icc)."""

    def reaches(k: int) -> bool:
        grown = variance.scaled(scenarios=k) if by == "scenarios" else variance.scaled(samples=k)
        return mde(grown, alpha, power) <= abs(effect)

    if not reaches(REACH):
        return None
    low, high = 0, 1
    while not reaches(high):
        low, high = high, high * 2
    while high - low > 1:
        middle = (low + high) // 2
        low, high = (low, middle) if reaches(middle) else (middle, high)
    return high


def pool_icc(variances: list[Variance]) -> list[Variance]:
    """Every statistic whose icc a pilot measured gets the mean of those estimates: the clustering is the
    design's, and each statistic's own estimate from a pilot of a few hundred answers is noisy."""
    measured = [v.icc for v in variances if v.measured]
    if not measured:
        return variances
    pooled = float(np.mean(measured))
    return [replace(v, icc=pooled) if v.measured else v for v in variances]


def bh_level(alpha: float, tests: int) -> float:
    """The level one statistic is held to when BH controls the false discovery rate at alpha over `tests`
    statistics and the effect planned for may be the only real one: BH's first threshold, alpha / tests."""
    return alpha / max(tests, 1)


@dataclass(frozen=True)
class Pilot:
    """What a pilot says about one statistic: the answers' variance and the intra-cluster correlation."""

    unit_var: float
    icc: float
    design_effect: float


@dataclass(frozen=True)
class Assumed:
    """A statistic's spread without a pilot, or where the pilot cannot tell it: stated assumptions."""

    unit_var: float
    icc: float
    text: str


def pilot_spread(found: Pilot | str | None, pilot: Path | None, answers: int,
                 assumed: Assumed) -> tuple[float, float, str]:
    """(unit variance, icc, where they come from) of one statistic, as `Variance` takes them: the pilot's
    estimate `found`, or the assumptions when there is no pilot (None) or it cannot tell (the reason)."""
    if found is None or pilot is None:
        return assumed.unit_var, assumed.icc, assumed.text
    if isinstance(found, str):
        return assumed.unit_var, assumed.icc, f"{assumed.text} (the pilot {pilot} cannot tell: {found})"
    return found.unit_var, found.icc, f"{PILOT} {pilot} ({answers:,} answers)"


def _lacking(n1: int, n0: int, groups: int, where: str = " in an arm") -> str | None:
    """Why answers this few cannot give a spread, or None."""
    if min(n1, n0) < 2:
        return f"{min(n1, n0)} answer(s){where}, fewer than 2"
    return f"{groups} cluster(s), fewer than 2" if groups < 2 else None


def from_pilot(y: np.ndarray, at_level: np.ndarray, clusters: np.ndarray) -> Pilot | str:
    """unit_var (pooled within arms) and icc of a difference of arm means, from answers `y` of either arm
    (`at_level` says which) in integer-coded `clusters`: DEFF = clustered variance / independent variance,
    icc = (DEFF - 1) / (m - 1) with m the answers per (cluster, arm) that holds any, kept within [0, 1].
    Where the pilot cannot tell (an arm with fewer than two answers, fewer than two clusters, or no
    variation within the arms), why."""
    n1, n0 = int(at_level.sum()), int((~at_level).sum())
    lacking = _lacking(n1, n0, int(np.unique(clusters).size))
    if lacking is not None:
        return lacking
    unit_var = float(((n1 - 1) * y[at_level].var(ddof=1) + (n0 - 1) * y[~at_level].var(ddof=1)) / (n1 + n0 - 2))
    if unit_var <= 0:
        return "its answers do not vary within the arms"
    independent = unit_var * (1 / n1 + 1 / n0)
    deff = clustered_se(contrast_influence(y, at_level, ~at_level, clusters).psi) ** 2 / independent
    cells = np.unique(np.stack([clusters, at_level.astype(np.int64)]), axis=1).shape[1]
    return _with_icc(unit_var, deff, (n1 + n0) / cells)


def from_one_arm(y: np.ndarray, clusters: np.ndarray) -> Pilot | str:
    """unit_var and icc of answers `y` of one arm (one model's, planned against another's alike) in
    integer-coded `clusters`: the design effect of their mean, clustered over independent, as `from_pilot`."""
    n, groups = len(y), int(np.unique(clusters).size)
    lacking = _lacking(n, n, groups, where="")
    if lacking is not None:
        return lacking
    unit_var = float(y.var(ddof=1))
    if unit_var <= 0:
        return "its answers do not vary"
    codes = np.unique(clusters, return_inverse=True)[1].astype(np.int64)
    deff = clustered_se(mean_influence(y, codes, groups).psi) ** 2 / (unit_var / n)
    return _with_icc(unit_var, deff, n / groups)


def _with_icc(unit_var: float, deff: float, m: float) -> Pilot:
    """icc = (DEFF - 1) / (m - 1) over m answers per arm and cluster, kept within [0, 1] (0 when m is 1)."""
    icc = float(np.clip((deff - 1) / (m - 1), 0.0, 1.0)) if m > 1 else 0.0
    return Pilot(unit_var, icc, float(deff))
