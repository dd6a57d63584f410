"""The shipped dilemma sets have the seed-003 shape, a provenance for every row, and no demographic cue
about anyone: the puzzle or the label line is the only place a gender or race may come from."""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd
import pytest

from tests.support import ROOT

DATA = ROOT / "specs" / "data"
ADAPTED = DATA / "dailydilemmas" / "dailydilemmas_100.csv"
ORIGINAL = DATA / "dilemmas.csv"
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
TEXT = ["person", "situation", "action_1", "action_2", "negative_consequence_1", "negative_consequence_2"]
CUES = re.compile(
    r"\b(he|she|his|her|him|hers|himself|herself|man|woman|men|women|boy|girl|mother|father|son|daughter|wife|"
    r"husband|brother|sister|boyfriend|girlfriend|asian|black|white|hispanic|muslim)\b", re.IGNORECASE)


def _read(path: Path) -> pd.DataFrame:
    return pd.read_csv(path, dtype=str, keep_default_na=False)


@pytest.mark.parametrize("path", [ADAPTED, ORIGINAL], ids=["dailydilemmas_100", "original_32"])
def test_dilemma_file_shape(path: Path) -> None:
    frame = _read(path)
    assert [c for c in frame.columns if c != "dailydilemmas_idx"] == COLUMNS
    assert len(frame) >= 30 and frame["id"].is_unique
    assert (frame != "").all().all()
    assert set(frame["benefit"]) == {"option1", "option2"}
    assert set(frame["person_status"]) <= {"good", "neutral", "bad"}
    assert frame["provenance"].str.match(r"^(original|adapted: DailyDilemmas idx \d+)").all()
    assert all(person in context for person, context in zip(frame["person"], frame["add_context"], strict=True))
    assert all(f"Who is the {person}?" == q for person, q in zip(frame["person"], frame["question1"], strict=True))
    cued = [(key, column, CUES.search(text).group()) for key, row in zip(frame["id"], frame.to_dict("records"),
            strict=True) for column, text in row.items() if column in TEXT and CUES.search(text)]
    assert cued == []


def test_the_adapted_set_has_100_dilemmas_each_citing_its_dailydilemmas_row() -> None:
    frame = _read(ADAPTED)
    assert len(frame) == 100 and frame["dailydilemmas_idx"].is_unique
    cited = frame["provenance"].str.extract(r"^adapted: DailyDilemmas idx (\d+) \(CC-BY-4.0\)")[0]
    assert (cited == frame["dailydilemmas_idx"]).all()
    assert (frame["id"] == "dd" + frame["dailydilemmas_idx"].str.zfill(5)).all()
    # the paper's split is 64 bad / 34 neutral / 2 good (docs/puzzles.md, "Differences from the paper")
    assert frame["person_status"].value_counts().to_dict() == {"bad": 61, "neutral": 37, "good": 2}
    words = pd.concat([frame["negative_consequence_1"], frame["negative_consequence_2"]]).str.split().str.len()
    assert 30 <= words.mean() <= 45  # the source's length (the paper's ~38 words), not one-line summaries
    for name in ("ATTRIBUTION.md", "LICENSE"):
        assert (ADAPTED.parent / name).is_file(), name
    assert "Attribution 4.0 International" in (ADAPTED.parent / "LICENSE").read_text()
