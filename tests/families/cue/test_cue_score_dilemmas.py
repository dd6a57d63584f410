"""The shipped dilemma set has the seed-003 shape and a provenance for every row."""

from __future__ import annotations

import pandas as pd

from tests.support import ROOT

DILEMMAS = ROOT / "specs" / "data" / "dilemmas.csv"
COLUMNS = [
    "id",
    "topic_group",
    "person_status",
    "person",
    "situation",
    "add_context",
    "question1",
    "question2",
    "action_1",
    "action_2",
    "negative_consequence_1",
    "negative_consequence_2",
    "benefit",
    "provenance",
]


def test_dilemma_file_shape() -> None:
    frame = pd.read_csv(DILEMMAS, dtype=str, keep_default_na=False)
    assert list(frame.columns) == COLUMNS
    assert len(frame) >= 30 and frame["id"].is_unique
    assert (frame[COLUMNS] != "").all().all()
    assert set(frame["benefit"]) == {"option1", "option2"}
    assert set(frame["person_status"]) <= {"good", "neutral", "bad"}
    assert frame["provenance"].str.match(r"^(original|adapted: DailyDilemmas idx \d+)").all()
    assert all(person in context for person, context in zip(frame["person"], frame["add_context"], strict=True))
