"""Position bias of effects runs: planted slot-followers and meaning-followers recovered, and the statistics
cross-checked with statsmodels (sampled) and scipy's Welch t (logprob)."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from statsmodels.stats.proportion import proportions_ztest

from spec_audits.contract.suite_model import SuiteRow
from spec_audits.families.effects.score import positions
from tests.support import forced_choice_rows


def _frame(rows: list[SuiteRow], answers: list[str | None], logprobs: list[dict[str, float]] | None = None
           ) -> pd.DataFrame:
    moved = _moved(rows)
    records = [{"scenario": f"s{i % 5}", **positions.slot_columns(list(row.answers), positions.meanings(row), answer,
                                                                  None if logprobs is None else logprobs[i], moved)}
               for i, (row, answer) in enumerate(zip(rows, answers, strict=True))]
    return pd.DataFrame(records)


def _moved(rows: list[SuiteRow]) -> str | None:
    return positions.moved_of(Counter(positions.meanings(row) for row in rows))


def test_the_moved_meaning_is_one_shown_first_in_some_rows_only() -> None:
    rows = forced_choice_rows(8, 1)  # tea/coffee in both orders
    assert _moved(rows) == "coffee"
    one_order = [r for r in rows if r.cell["order"] == "AB"]
    assert _moved(one_order) is None
    assert positions.summary(pd.DataFrame(), None, "sample", 0.05) == {"absent": positions.ONE_ORDER}


def test_a_model_that_always_answers_the_first_slot_has_position_share_one() -> None:
    rows = forced_choice_rows(40, 1)
    found = positions.summary(_frame(rows, ["A"] * 40), "coffee", "sample", 0.05)
    assert found["position"] == 1.0 and found["p"] < 1e-8
    assert found["shown_first"] == {"n": 20, "first_share": 1.0}
    assert found["shown_elsewhere"] == {"n": 20, "first_share": 1.0, "share": 0.0}


def test_a_model_that_follows_the_meaning_has_position_share_one_half() -> None:
    rows = forced_choice_rows(40, 1)
    answers = [next(t for t, m in row.answers.items() if m == "tea") for row in rows]
    found = positions.summary(_frame(rows, answers), "coffee", "sample", 0.05)
    assert found["position"] == 0.5 and found["p"] == 1.0


def test_the_sampled_test_is_statsmodels_two_proportion_z() -> None:
    rng = np.random.default_rng(11)
    rows = forced_choice_rows(200, 1)
    answers = [str(rng.choice(["A", "B"], p=[0.7, 0.3])) for _ in rows]
    frame = _frame(rows, answers)
    found = positions.summary(frame, "coffee", "sample", 0.05)
    first, other = frame[frame["m_first"]], frame[~frame["m_first"]]
    _, p = proportions_ztest([first["w_first"].sum(), other["w_m"].sum()], [len(first), len(other)])
    assert found["p"] == pytest.approx(p)
    assert found["position"] == pytest.approx((first["w_first"].mean() + other["w_first"].mean()) / 2)
    assert found["ci"][0] < found["position"] < found["ci"][1]


def test_the_logprob_test_is_welchs_t_over_rows() -> None:
    rng = np.random.default_rng(12)
    rows = forced_choice_rows(60, 1)
    slot_a = rng.beta(6, 3, len(rows))  # P(first slot): a pull toward slot A
    logprobs = [{"A": float(p), "B": float(1 - p)} for p in slot_a]
    frame = _frame(rows, [None] * len(rows), logprobs)
    found = positions.summary(frame, "coffee", "logprob", 0.05)
    first, other = frame[frame["m_first"]], frame[~frame["m_first"]]
    expected = stats.ttest_ind(first["w_first"], other["w_m"], equal_var=False)
    assert found["p"] == pytest.approx(expected.pvalue, rel=1e-6)
    assert found["position"] == pytest.approx(slot_a.mean(), abs=0.05) and found["position"] > 0.55


def test_positions_csv_rows_count_each_scenario_and_order() -> None:
    rows = forced_choice_rows(20, 1)
    table = positions.table(_frame(rows, ["A"] * 20), "m")
    assert sum(r["n"] for r in table) == 20 and all(r["first_share"] == 1.0 for r in table)
    assert {(r["scenario"], r["moved_first"]) for r in table} <= {(f"s{i}", b) for i in range(5) for b in (True, False)}
