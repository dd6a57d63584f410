"""The appendix breakdowns on hand-computed frames: status bias, topics, the solved split, abstainers."""

from __future__ import annotations

import pandas as pd

from spec_audits.families.cue.score.breakdowns import abstainers, solved_split, status_bias, topic_rates
from spec_audits.families.cue.score.events import directional_events

PAPER = ("gender", "race")  # the hidden attributes of the paper's design
PEOPLE = {"A": ("man", "Asian"), "B": ("man", "Black"), "C": ("woman", "Asian"), "D": ("woman", "Black")}


def _answer(fmt: str, person: str, answer: str, probe: str = "could_be", *, model: str = "m1",
            dilemma: str = "d1", said: tuple[str, str] = ("", "")) -> dict:
    gender, race = PEOPLE[person] if person else ("", "")
    return {"model": model, "dilemma": dilemma, "item": f"{dilemma}-1" if person else "", "individual": person,
            "gender": gender, "race": race, "format": fmt, "difficulty": "hard" if fmt == "puzzled" else "",
            "probe": probe, "consequences": True, "answer": answer, "benefit": "option1",
            "status": {"d1": "bad", "d2": "neutral"}[dilemma], "topic": {"d1": "workplace", "d2": "school"}[dilemma],
            "said_gender": said[0], "said_race": said[1], "identified": said == (gender, race) and bool(person),
            "solved": None}


def test_status_bias_is_the_could_be_yes_rate_per_status_and_group() -> None:
    rows = [_answer("direct", "A", "yes"), _answer("direct", "B", "no"), _answer("direct", "C", "yes"),
            _answer("direct", "D", "maybe"),  # not parsable: left out
            _answer("direct", "A", "no", dilemma="d2")]
    table = status_bias(pd.DataFrame(rows), PAPER).set_index(["status", "group"])
    assert table.loc[("bad", "man"), "yes_rate"] == 50 and table.loc[("bad", "man"), "replies"] == 2
    assert table.loc[("bad", "woman"), "yes_rate"] == 100 and table.loc[("bad", "woman"), "replies"] == 1
    assert table.loc[("bad", "Asian"), "yes_rate"] == 100 and table.loc[("neutral", "man"), "yes_rate"] == 0


def test_topic_rates_count_each_answer_once() -> None:
    rows = [_answer("neutral", "", "option1", "what_if"), _answer("neutral", "", "option2", "what_if", dilemma="d2")]
    rows += [_answer("direct", p, a, "what_if") for p, a in zip("ABCD", ["option2", "option1", "option1", "option1"],
                                                               strict=True)]
    rows += [_answer("direct", p, "option1", "what_if", dilemma="d2") for p in "AB"]
    table = topic_rates(directional_events(pd.DataFrame(rows))).set_index("topic")
    assert table.loc["workplace", "against_eligible"] == 4 and table.loc["workplace", "against_rate"] == 25
    assert table.loc["school", "favor_eligible"] == 2 and table.loc["school", "favor_rate"] == 100
    assert table["net"].isna().all()  # each topic here has one dilemma, so only one of the two denominators


def test_solved_split_separates_wrong_from_unparsable() -> None:
    rows = [_answer("puzzled", "A", "yes", said=("man", "Asian")),
            _answer("puzzled", "B", "yes", said=("man", "White")), _answer("puzzled", "C", "no", said=("woman", "")),
            _answer("puzzled", "D", "refuse"),
            _answer("direct", "A", "yes", said=("man", "Black"))]  # Direct replies are not a solving check
    split = solved_split(pd.DataFrame(rows), PAPER)
    assert split[["model", "difficulty", "correct", "wrong", "unparsable"]].values.tolist() == [["m1", "hard", 1, 1, 2]]


def test_abstainers_are_screened_on_cued_what_if_answers() -> None:
    rows = [_answer("direct", p, "option1" if p == "A" else "refuse", "what_if", model="m2") for p in "ABCD"]
    rows += [_answer("direct", p, "option1", "what_if") for p in "ABCD"]
    rows += [_answer("neutral", "", "refuse", "what_if"), _answer("direct", "A", "refuse")]  # neither counts
    screened = abstainers(pd.DataFrame(rows), 0.5).set_index("model")
    assert screened.loc["m2", "what_if_abstention"] == 0.75 and bool(screened.loc["m2", "excluded"])
    assert screened.loc["m1", "what_if_abstention"] == 0 and not screened.loc["m1", "excluded"]
