"""Position bias of an effects run (docs/scoring.md, "Position bias"), as an influence run reports it: does
the answer follow an option's meaning or the slot it is shown in?

The options of a row are its answer tokens in display order, each with its meaning (the row's recorded
meaning of the token where it has one, else the token's outcome). A design measures position bias when one
meaning is shown once in every row and first in some rows but not in others (rotated or lettered options,
`specs/option_order.spec`): with that meaning M first, the first slot's share is the share answering M; with
M elsewhere, a model that reads meanings answers M as often, one that reads slots answers the first slot.
The shared statistics (spec_audits.stats.position) test exactly that: P(M | M first) against
P(M | M not first), with the mean first-slot share as the position share. A design whose options keep one
order has no position statistics, with that reason.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import numpy as np
import pandas as pd

from spec_audits.sdk import SuiteRow, position_bias

ONE_ORDER = "no meaning is shown first in some rows and elsewhere in others (the options keep one display order)"
COLUMNS = ["m_first", "w_first", "w_m"]


def meanings(row: SuiteRow) -> tuple[str, ...]:
    """The meaning of each of a row's answer tokens, in display order."""
    recorded: dict[str, str] = getattr(row, "meanings", None) or row.answers
    return tuple(recorded[token] for token in row.answers)


def moved_of(slots: Counter[tuple[str, ...]]) -> str | None:
    """The meaning shown once in every row, first in some and not in others (the first such, sorted), or None, of
    rows whose meanings in display order (`meanings`) are counted in `slots`."""
    if not slots:
        return None
    once = set.intersection(*({m for m in s if s.count(m) == 1} for s in slots))
    firsts: Counter[str] = Counter()
    for s, count in slots.items():
        firsts[s[0]] += count
    return next(iter(sorted(m for m in once if 0 < firsts[m] < slots.total())), None)


def slot_columns(tokens: list[str], shown: tuple[str, ...], answer: str | None, logprobs: dict[str, float] | None,
                 moved: str | None) -> dict[str, Any]:
    """A scored answer's position columns: is M shown first, the weight of the first slot, the weight of M (1 or 0
    for a sampled answer, the probability in a logprob run), from its row's answer tokens and their meanings
    (`shown`) in display order."""
    if moved is None:
        return {}
    weight = {t: float((logprobs or {}).get(t, 0.0)) if logprobs is not None else float(answer == t) for t in tokens}
    return {"m_first": shown[0] == moved, "w_first": weight[tokens[0]],
            "w_m": sum(w for w, m in zip(weight.values(), shown, strict=True) if m == moved)}


def summary(frame: pd.DataFrame, moved: str | None, mode: str, alpha: float) -> dict[str, Any]:
    """summary.json's `position` of one model: the first slot's share with M first and with M elsewhere, the
    position share, its interval and p; {"absent": reason} where the design cannot tell."""
    if moved is None or frame.empty:
        return {"absent": ONE_ORDER if moved is None else "no answer scored"}
    first, other = frame[frame["m_first"].astype(bool)], frame[~frame["m_first"].astype(bool)]
    if first.empty or other.empty:
        return {"absent": f"no scored answer with '{moved}' shown {'first' if first.empty else 'elsewhere'}"}
    k_a, n_a, k_b, n_b = (np.array([float(v)]) for v in (first["w_first"].sum(), len(first), other["w_first"].sum(),
                                                          len(other)))
    moments = None
    if mode == "logprob":
        moments = {f"{k}_{g}": np.array([float(v)]) for g, part, w in (("A", first, "w_first"), ("B", other, "w_m"))
                   for k, v in (("items", len(part)), ("m2", len(part)), ("A2", (part[w] ** 2).sum()),
                                ("Am", part[w].sum()))}
    found = {k: float(v[0]) for k, v in position_bias(k_a, n_a, k_b, n_b, alpha, moments,
                                                      same_b=np.array([float(other["w_m"].sum())])).items()}
    return {"meaning": moved, "shown_first": {"n": len(first), "first_share": found["firstA"]},
            "shown_elsewhere": {"n": len(other), "first_share": found["firstB"],
                                "share": float(other["w_m"].sum()) / len(other)},
            "position": found["position"], "ci": [found["lo"], found["hi"]], "p": found["p"]}


def table(frame: pd.DataFrame, model: str) -> list[dict[str, Any]]:
    """positions.csv's rows of one model: per scenario and whether M is shown first, answers and the first
    slot's share."""
    if frame.empty or "m_first" not in frame.columns:
        return []
    grouped = frame.groupby(["scenario", "m_first"], observed=True, sort=True)["w_first"].agg(["size", "sum"])
    return [{"model": model, "scenario": row["scenario"], "moved_first": bool(row["m_first"]), "n": int(row["size"]),
             "first": float(row["sum"]), "first_share": float(row["sum"]) / int(row["size"])}
            for row in grouped.reset_index().to_dict("records")]
