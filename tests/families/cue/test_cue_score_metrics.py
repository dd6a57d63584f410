"""Cue-visibility scoring on a small hand-computed example (methods §5)."""

from __future__ import annotations

import math

import pandas as pd
import pytest
from scipy.stats import binomtest

from spec_audits.families.cue.score import (
    abstention,
    cue_gap,
    directional_events,
    macro,
    rank_change,
    rates,
    sign_tests,
)

PAPER = ("gender", "race")  # the hidden attributes of the paper's design
PEOPLE = {"A": ("man", "Asian"), "B": ("man", "Black"), "C": ("woman", "Asian"), "D": ("woman", "Black")}
BENEFIT = {"d1": "option1", "d2": "option2", "d3": "option1"}


def _neutral(dilemma: str, answer: str) -> dict:
    return {
        "model": "m1",
        "dilemma": dilemma,
        "item": "",
        "individual": "",
        "gender": "",
        "race": "",
        "format": "neutral",
        "difficulty": "",
        "probe": "what_if",
        "consequences": True,
        "answer": answer,
        "benefit": BENEFIT[dilemma],
        "solved": None,
    }


def _probe(fmt: str, dilemma: str, person: str, answer: str, solved: bool | None = None, probe: str = "what_if"):
    gender, race = PEOPLE[person]
    return _neutral(dilemma, answer) | {
        "item": f"{dilemma}-1",
        "individual": person,
        "gender": gender,
        "race": race,
        "format": fmt,
        "difficulty": "hard" if fmt == "puzzled" else "",
        "probe": probe,
        "solved": solved,
    }


@pytest.fixture
def frame() -> pd.DataFrame:
    rows = [_neutral("d1", "option1"), _neutral("d2", "option1"), _neutral("d3", "unsure")]
    direct = {"d1": ["option1", "option2", "option1", "refuse"], "d2": ["option2", "option1", "option2", "option2"]}
    for dilemma, answers in direct.items():
        rows += [_probe("direct", dilemma, p, a) for p, a in zip(PEOPLE, answers, strict=True)]
    rows += [_probe("direct", "d3", "A", "option2")]  # its baseline abstained: dropped
    for dilemma in ("d1", "d2"):
        rows += [_probe("puzzled", dilemma, p, "option2", solved=(dilemma, p) != ("d1", "A")) for p in PEOPLE]
    rows += [
        _probe("direct", "d1", "A", "yes", probe="could_be"),
        _probe("direct", "d1", "B", "maybe", probe="could_be"),
    ]
    return pd.DataFrame(rows)


def _row(table: pd.DataFrame, **where: object) -> pd.Series:
    mask = pd.Series(True, index=table.index)
    for column, value in where.items():
        mask &= table[column] == value
    assert mask.sum() == 1, where
    return table[mask].iloc[0]


def test_events_and_rates(frame: pd.DataFrame) -> None:
    events = directional_events(frame)
    assert len(events) == 7 + 8  # 8 direct minus one abstention, plus 8 puzzled; d3 dropped
    table = rates(events, PAPER)
    # Direct: man: d1 A kept, d1 B against; d2 A favor, d2 B not
    man = _row(table, format="direct", group="man")
    assert (man["favor"], man["favor_eligible"], man["against"], man["against_eligible"]) == (1, 2, 1, 2)
    assert (man["favor_rate"], man["against_rate"], man["net"]) == (50, 50, 0)
    assert _row(table, format="direct", group="woman")[["favor_rate", "against_rate", "net"]].tolist() == [100, 0, 100]
    assert _row(table, format="direct", group="Asian")["net"] == 100
    assert _row(table, format="direct", group="Black")[["favor_rate", "against_rate", "net"]].tolist() == [50, 100, -50]
    assert _row(table, format="puzzled", group="Black")[["favor_rate", "against_rate", "net"]].tolist() == [100, 100, 0]


def test_gap_and_shifts(frame: pd.DataFrame) -> None:
    gaps = cue_gap(rates(directional_events(frame), PAPER))
    assert dict(zip(gaps["group"], gaps["gap"], strict=True)) == {"man": 0, "woman": 100, "Asian": 100, "Black": -50}
    woman = _row(gaps, group="woman")
    assert (woman["delta_against"], woman["delta_favor"]) == (100, 0)
    assert set(gaps["difficulty"]) == {"hard"}


def test_solved_only_restricts_puzzled_answers(frame: pd.DataFrame) -> None:
    table = rates(directional_events(frame, solved_only=True), PAPER)
    man = _row(table, format="puzzled", group="man")
    assert (man["against"], man["against_eligible"], man["favor"], man["favor_eligible"]) == (1, 1, 2, 2)
    assert _row(table, format="direct", group="man")["against_eligible"] == 2  # Direct rows untouched


def test_macro_and_abstention(frame: pd.DataFrame) -> None:
    direct = rates(directional_events(frame), PAPER).query("format == 'direct'")
    assert macro(direct, "net", ["model"])["net"].tolist() == [37.5]
    rates_ = abstention(frame)
    assert _row(rates_, format="direct", probe="what_if")[["abstentions", "answers"]].tolist() == [1, 9]
    assert _row(rates_, format="direct", probe="could_be")["rate"] == 0.5
    assert _row(rates_, format="neutral", probe="what_if")["rate"] == pytest.approx(1 / 3)


def test_empty_denominator_is_nan() -> None:
    rows = [_neutral("d1", "option1"), _probe("direct", "d1", "A", "option2")]
    man = _row(rates(directional_events(pd.DataFrame(rows)), PAPER), group="man")
    assert math.isnan(man["favor_rate"]) and math.isnan(man["net"]) and man["against_rate"] == 100


@pytest.mark.parametrize(("adverse", "expected"), [(11, 0.0225), (10, 0.0923), (9, 0.267), (7, 1.0)])
def test_sign_tests_match_the_paper_and_scipy(adverse: int, expected: float) -> None:
    gaps = [1.0] * adverse + [-1.0] * (13 - adverse) + [0.0]  # one tie, excluded
    frame = pd.DataFrame(
        {"consequences": True, "difficulty": "hard", "dimension": "gender", "group": "woman", "gap": gaps}
    )
    result = sign_tests(frame).iloc[0]
    assert (result["adverse"], result["favourable"]) == (adverse, 13 - adverse)
    assert result["p"] == pytest.approx(expected, abs=5e-4)
    assert result["p"] == binomtest(adverse, 13).pvalue


def test_rank_change() -> None:
    scores = pd.DataFrame({"model": list("abcd"), "direct": [4, 3, 2, 1], "puzzled": [3, 4, 2, 1]})
    tau, _, ranked = rank_change(scores, "direct", "puzzled")
    assert tau == pytest.approx(4 / 6)  # 5 concordant pairs, 1 discordant
    assert ranked.set_index("model")["displacement"].to_dict() == {"a": 1, "b": -1, "c": 0, "d": 0}
    assert rank_change(scores.assign(puzzled=[1, 2, 3, 4]), "direct", "puzzled")[0] == pytest.approx(-1)
