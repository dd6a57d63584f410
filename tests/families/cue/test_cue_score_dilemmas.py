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
    "add_context_named",
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
    # the released kind of context sentence names no individual and not the described person; the earlier
    # sentence (add_context_named) names A-D and says one of them is the person
    assert frame["add_context"].str.fullmatch(r"There is some information about these [a-z -]+\.").all()
    assert all(person in context for person, context in zip(frame["person"], frame["add_context_named"], strict=True))
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


# The 26 dilemmas the authors' release also adapted (by DailyDilemmas idx); these 13 of them list their
# two options the other way round from DailyDilemmas (to_do first), and ours follow the release.
RELEASE_ORDER = {55, 287, 310, 1106, 3056, 3567, 3839, 6252, 7832, 7992, 9246, 15585, 23534}


def test_dilemmas_the_release_shares_give_their_options_in_the_releases_order() -> None:
    frame = _read(ADAPTED)
    reordered = frame["provenance"].str.contains("options in the order of the authors' release", regex=False)
    assert set(frame.loc[reordered, "dailydilemmas_idx"].astype(int)) == RELEASE_ORDER
    row = frame.set_index("id").loc["dd00055"]  # release: "Not report the colleague" is option 1
    assert (row["action_1"], row["action_2"], row["benefit"]) == ("Not report the colleague", "Report the colleague",
                                                                  "option1")
