"""Flip statistics: a stub that flips on pushback in a planted share of items is measured at that share,
McNemar's test agrees with statsmodels', directions are counted, and an answered turn can stand in for the
row's answer."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from statsmodels.stats.contingency_tables import mcnemar
from statsmodels.stats.proportion import proportion_confint

from spec_audits.contract.reader import read_results, read_suite
from spec_audits.runner.turn_flips import FlipInputError, at_turn, flip_rates, mcnemar_by_meaning, pairs
from tests.runner.test_run_conversations import Flipper, _run, are_you_sure_rows
from tests.support import write_suite


def test_a_planted_flip_share_is_recovered(tmp_path: Path) -> None:
    planted = {i for i in range(40) if i % 4 == 1}  # 10 of 40 items flip
    suite = write_suite(tmp_path / "suite", are_you_sure_rows(40))
    _run(suite, tmp_path / "run", Flipper(planted), concurrency=4)
    rows = read_suite(suite).rows
    table = pairs(rows, read_results(tmp_path / "run" / "results.jsonl"))
    (overall,) = flip_rates(table, ["model"]).to_dict("records")
    assert (overall["pairs"], overall["flips"], overall["flip_rate"]) == (40, 10, 0.25)
    low, high = proportion_confint(10, 40, method="wilson")
    assert (overall["ci_low"], overall["ci_high"]) == pytest.approx((low, high))
    assert (overall["toward"], overall["away"], overall["toward_share"]) == (10, 0, 1.0)
    expected = mcnemar([[30, 10], [0, 0]], exact=True).pvalue
    assert overall["mcnemar_p"] == pytest.approx(expected)
    per_item = flip_rates(table, ["item"]).set_index("item")["flip_rate"]
    assert {int(item[1:]) for item, rate in per_item.items() if rate == 1.0} == planted
    assert set(per_item) == {0.0, 1.0}


def test_mcnemar_matches_statsmodels_and_directions_are_counted() -> None:
    cases = [("A", "A", "B")] * 7 + [("A", "B", "B")] * 5 + [("B", "A", "A")] * 2 + [("B", "B", "A")] * 6
    table = pd.DataFrame([{"model": "m", "first": f, "last": s, "pushed": p, "meanings": "A|B"} for f, s, p in cases])
    (stats,) = flip_rates(table, ["model"]).to_dict("records")
    assert stats["mcnemar_p"] == pytest.approx(mcnemar([[7, 5], [2, 6]], exact=True).pvalue)
    assert (stats["discordant_low_to_high"], stats["discordant_high_to_low"]) == (5, 2)
    assert (stats["flips"], stats["toward"], stats["away"]) == (7, 7, 0)


def test_absent_statistics_say_why() -> None:
    table = pd.DataFrame([{"model": "m", "first": "A", "last": "A", "pushed": "B", "meanings": "A|B"},
                          {"model": "m", "first": None, "last": "B", "pushed": None, "meanings": "A|B"}])
    (stats,) = flip_rates(table, ["model"]).to_dict("records")
    assert (stats["pairs"], stats["excluded"], stats["flip_rate"]) == (1, 1, 0.0)
    assert (stats["mcnemar_p"], stats["mcnemar_absent"], stats["toward_share"]) == (None, "no discordant pairs", None)
    three = table.assign(meanings="A|B|C")
    assert flip_rates(three, ["model"])["mcnemar_absent"][0] == \
        "more than two meanings, or not the same two in every pair: see turn_mcnemar.csv"
    with pytest.raises(FlipInputError, match="no cell key condition"):
        flip_rates(table, ["condition"])


def test_no_valid_pair_leaves_mcnemar_empty_with_its_columns() -> None:
    """A family whose replies the runner parses no token from (cue's JSON): every pair is excluded, and the
    per-meaning table is empty but keeps its columns (turn_report renames `by`'s last to `level`)."""
    table = pd.DataFrame([{"model": "m", "arm": a, "first": None, "last": None, "pushed": None, "meanings": "A|B"}
                          for a in "xy"])
    found = mcnemar_by_meaning(table, ["model", "arm"])
    assert found.empty and list(found.columns)[:3] == ["model", "arm", "meaning"]
    (stats,) = flip_rates(table, ["model"]).to_dict("records")
    assert (stats["pairs"], stats["excluded"], stats["note"]) == (0, 2, "no pair with both answers valid")
    assert (stats["mcnemar_p"], stats["mcnemar_absent"]) == (None, "no pairs")


def test_an_answered_turn_stands_in_for_the_answer(tmp_path: Path) -> None:
    suite = write_suite(tmp_path / "suite", are_you_sure_rows(4))
    _run(suite, tmp_path / "run", Flipper({0, 1}))
    rows = read_suite(suite).rows
    results = read_results(tmp_path / "run" / "results.jsonl")
    assert sorted(r.answer for r in results) == ["A", "A", "B", "B"]
    assert {r.answer for r in at_turn(results, rows, "first")} == {"A"}
    with pytest.raises(FlipInputError, match="has no answered turn 'second' \\(it has first, answer\\)"):
        at_turn(results, rows, "second")
