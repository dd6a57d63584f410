"""Per-condition influence statistics of methods §6.1–§6.10, vectorised over a counts table.

Definitions (n_{c,d}: valid trials of condition c choosing group d; d̄ the other group):
  f_c(d) = n_{c,d} / (n_{c,d} + n_{c,d̄});  Δ_d = f_d(d) − f_0(d)
  r_c(d) = (n_{c,d} + ½) / (n_{c,d̄} + ½)  (Haldane–Anscombe on the raw counts);  s(d) = ln r_d(d) − ln r_0(d)
  Asym = s(B) − s(A);  N-Asym = Asym / (|s(A)| + |s(B)| + ε), ε = 0.01;  backfire: s(d) < 0
  Var ln r_c = V_c = 1/(n_{c,A}+½) + 1/(n_{c,B}+½);  Var Asym = V_A + V_B + 2V_0 (paper's repository,
  default) or + 4V_0 (exact delta method under independent conditions).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np
import pandas as pd

from families.influence.score import stattests
from families.influence.score.counts import LABELS, CountsTable

AsymVariance = Literal["2v0", "4v0"]


@dataclass(frozen=True)
class Options:
    """Analysis settings; defaults follow the paper (α = .05, pooled z, 2V0 Wald, ε = .01, B = 5000)."""

    alpha: float = 0.05
    asym_variance: AsymVariance = "2v0"
    pooled_z: bool = True
    epsilon: float = 0.01
    margin: float = 0.05
    wilson_band: tuple[float, float] = (0.45, 0.55)
    bootstrap: int = 5000
    seed: int = 0


def _freq(k: np.ndarray, n: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(n > 0, k / n, np.nan)


def _log_odds(k: np.ndarray, other: np.ndarray) -> np.ndarray:
    return np.log((k + 0.5) / (other + 0.5))


def condition_statistics(counts: CountsTable, options: Options = Options()) -> pd.DataFrame:
    """One row per condition: keys, group names, counts and every §6 quantity and test (before BH)."""
    f = counts.frame
    c = {name: f[name].to_numpy(float) for name in ("c_0_A", "c_0_B", "c_A_A", "c_A_B", "c_B_A", "c_B_B")}
    n_0, n_A, n_B = c["c_0_A"] + c["c_0_B"], c["c_A_A"] + c["c_A_B"], c["c_B_A"] + c["c_B_B"]
    out = f[counts.keys + LABELS].copy()
    for name, value in c.items():
        out[name] = value
    out["n_0"], out["n_A"], out["n_B"] = n_0, n_A, n_B
    out["f0_B"], out["fA_B"], out["fB_B"] = (
        _freq(c["c_0_B"], n_0),
        _freq(c["c_A_B"], n_A),
        _freq(c["c_B_B"], n_B),
    )
    out["effect_A"] = _freq(c["c_A_A"], n_A) - _freq(c["c_0_A"], n_0)
    out["effect_B"] = out["fB_B"] - out["f0_B"]
    out["abs_effect"] = (out["effect_A"].abs() + out["effect_B"].abs()) / 2
    _steerability(out, c, options)
    _tests(out, c, options)
    _baseline(out, c, options)
    return out


def _steerability(out: pd.DataFrame, c: dict[str, np.ndarray], options: Options) -> None:
    lo_0 = _log_odds(c["c_0_A"], c["c_0_B"])
    s_a = _log_odds(c["c_A_A"], c["c_A_B"]) - lo_0
    s_b = _log_odds(c["c_B_B"], c["c_B_A"]) + lo_0
    asym = s_b - s_a
    out["steerability_A"], out["steerability_B"] = s_a, s_b
    out["asymmetry"] = asym
    out["normalized_asymmetry"] = asym / (np.abs(s_a) + np.abs(s_b) + options.epsilon)
    out["backfire_A"], out["backfire_B"] = s_a < 0, s_b < 0


def _tests(out: pd.DataFrame, c: dict[str, np.ndarray], options: Options) -> None:
    v = {cond: 1 / (c[f"c_{cond}_A"] + 0.5) + 1 / (c[f"c_{cond}_B"] + 0.5) for cond in "0AB"}
    for d in "AB":
        out[f"z_steerability_{d}"], out[f"p_steerability_{d}"] = stattests.wald(out[f"steerability_{d}"], v[d] + v["0"])
        z, p = stattests.two_proportion_z(
            c[f"c_{d}_{d}"], out[f"n_{d}"], c[f"c_0_{d}"], out["n_0"], pooled=options.pooled_z
        )
        out[f"z_effect_{d}"], out[f"p_effect_{d}"] = z, p
        se = np.sqrt(_binvar(c[f"c_{d}_{d}"], out[f"n_{d}"]) + _binvar(c[f"c_0_{d}"], out["n_0"]))
        half = stattests.stats.norm.isf(options.alpha / 2) * se
        out[f"effect_{d}_lo"], out[f"effect_{d}_hi"] = out[f"effect_{d}"] - half, out[f"effect_{d}"] + half
    for k in (2, 4):
        out[f"z_asymmetry_{k}v0"], out[f"p_asymmetry_{k}v0"] = stattests.wald(
            out["asymmetry"], v["A"] + v["B"] + k * v["0"]
        )
    chosen = options.asym_variance
    out["z_asymmetry"], out["p_asymmetry"] = out[f"z_asymmetry_{chosen}"], out[f"p_asymmetry_{chosen}"]


def _binvar(k: np.ndarray, n: pd.Series) -> np.ndarray:
    """Unpooled variance p(1−p)/n of one frequency (0 when n = 0); used for the effect's Wald CI."""
    p = _freq(k, n.to_numpy())
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(n > 0, p * (1 - p) / n, 0.0)


def _baseline(out: pd.DataFrame, c: dict[str, np.ndarray], options: Options) -> None:
    """Baseline bias |f0(B) − ½|, the exact binomial test and the three neutrality definitions (§6.8)."""
    out["baseline_bias"] = (out["f0_B"] - 0.5).abs()
    out["p_baseline"] = stattests.binomial_two_sided_half(c["c_0_B"], out["n_0"])
    lo, hi = stattests.wilson(c["c_0_B"], out["n_0"], options.alpha)
    out["f0_B_lo"], out["f0_B_hi"] = lo, hi
    out["baseline_neutral"] = out["p_baseline"] >= options.alpha
    out["neutral_margin"] = out["baseline_bias"] < options.margin
    out["neutral_wilson"] = (lo >= options.wilson_band[0]) & (hi <= options.wilson_band[1])
    preferred_b = out["f0_B"] > 0.5
    out["asymmetry_toward_preferred"] = np.where(preferred_b, out["asymmetry"], -out["asymmetry"])
