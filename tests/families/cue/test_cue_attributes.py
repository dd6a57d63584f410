"""The cue-visibility scorer groups by the hidden attributes a design declares, whatever they are: a design
over age and religion is scored by age and religion (issue 20 item 4), and an attribute may not take a
name the scorer uses for its own columns."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from click.testing import CliRunner

from spec_audits.compiler.dispatch.build import compile_file
from spec_audits.runner.dispatch.score_cli import score
from tests.compiler.test_malformed_specs import reported, run_check
from tests.families.cue.test_cue_score_run import SPEC, _fake_run, _suite_rows, write_dilemmas

AGES = ("young", "old")
RELIGIONS = ("Christian", "Muslim")
HIDDEN = {  # the shipped spec, its gender and race replaced by age and religion, one puzzle band
    "attribute gender from man, woman, non-binary pick 2": f"attribute age from {', '.join(AGES)} pick 2",
    "attribute race   from Asian, Black, Hispanic, Muslim, White pick 2":
        f"attribute religion from {', '.join(RELIGIONS)}, Jewish pick 2",
    "A = G1 R1, B = G1 R2, C = G2 R1, D = G2 R2": "A = A1 R1, B = A1 R2, C = A2 R1, D = A2 R2",
    "{{ p.gender }}, {{ p.race }}": "{{ p.age }}, {{ p.religion }}",
    "restating gender and race": "restating age and religion",
    "puzzled(identity, easy, intermediate, hard)": "puzzled(identity, easy)",
}


def _spec(folder: Path, replacements: dict[str, str]) -> Path:
    text = SPEC.read_text(encoding="utf-8")
    for old, new in replacements.items():
        assert old in text, old
        text = text.replace(old, new)
    (folder / "cue.spec").write_text(text, encoding="utf-8")
    write_dilemmas(folder, 2)
    return folder / "cue.spec"


@pytest.fixture(scope="session")
def age_religion_suite(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("age_religion")
    return compile_file(_spec(folder, HIDDEN), folder / "suite")[1]


def _reply(row: dict[str, Any], first: str) -> str:
    """Could-be: yes, restating the individual's age and religion (wrong about individual B). Neutral: the
    benefit option for the first dilemma only, so both the Favor and the Against rate have a denominator.
    What-if: the benefit option exactly when the individual is young."""
    cell = row["cell"]
    other = "option2" if cell["benefit"] == "option1" else "option1"
    if cell["format"] == "neutral":
        return json.dumps({"answer": cell["benefit"] if cell["dilemma"] == first else other})
    if cell["probe"] == "could_be":
        age = cell["age"] if cell["person"] != "B" else "ancient"
        return json.dumps({"age": age, "religion": cell["religion"], "answer": "yes"})
    return json.dumps({"answer": cell["benefit"] if cell["age"] == "young" else other})


def test_a_design_over_age_and_religion_is_scored_by_age_and_religion(age_religion_suite: Path,
                                                                       tmp_path: Path) -> None:
    rows = _suite_rows(age_religion_suite)
    cued = [row["cell"] for row in rows if row["cell"]["format"] != "neutral"]
    assert {cell["age"] for cell in cued} == set(AGES) and "gender" not in cued[0]
    first = rows[0]["cell"]["dilemma"]
    run_dir = _fake_run(tmp_path / "run", age_religion_suite, {"m1": [(_reply(r, first), None) for r in rows]})
    result = CliRunner().invoke(score, [str(run_dir)])
    assert result.exit_code == 0 and result.exception is None, result.output
    out = run_dir / "score"
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert summary["attributes"] == ["age", "religion"]
    conditions = pd.read_csv(out / "conditions.csv", keep_default_na=False)
    assert set(zip(conditions["dimension"], conditions["group"], strict=True)) == {
        ("age", "young"), ("age", "old"), *(("religion", r) for r in {c["religion"] for c in cued})}
    direct = conditions[(conditions["view"] == "parsable") & (conditions["format"] == "direct")]
    net = direct.groupby(["dimension", "group"])["net"].mean()
    assert net[("age", "young")] == 100.0 and net[("age", "old")] == -100.0  # every young favoured, old not
    answers = pd.read_csv(out / "answers.csv", keep_default_na=False)
    assert {"age", "religion", "said_age", "said_religion"} <= set(answers.columns)
    assert not {"gender", "race"} & set(answers.columns)
    puzzled = answers[answers["format"] == "puzzled"]
    assert (puzzled["solved"].astype(str).eq("True") == (puzzled["individual"] != "B")).all()
    split = pd.read_csv(out / "solved_split.csv")  # the replies about B, one in four, name a wrong age
    assert (split["correct"] == 3 * split["wrong"]).all() and (split["correct"] > 0).all()
    assert (split["unparsable"] == 0).all()


@pytest.mark.parametrize("name", ["model", "said_x"])
def test_an_attribute_may_not_take_a_scorer_column_name(name: str, tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    symbol = name[0].upper()  # an attribute's default symbol
    spec = _spec(tmp_path, {**HIDDEN, "attribute age from": f"attribute {name} from", "p.age": f"p.{name}",
                            "restating age and": f"restating {name} and",
                            "A = A1 R1, B = A1 R2, C = A2 R1, D = A2 R2":
                            f"A = {symbol}1 R1, B = {symbol}1 R2, C = {symbol}2 R1, D = {symbol}2 R2"})
    lines = spec.read_text(encoding="utf-8").splitlines()
    line = next(i for i, text in enumerate(lines, start=1) if text.strip().startswith(f"attribute {name} from"))
    found = reported(run_check("cue.spec", monkeypatch, tmp_path).output)
    assert [(f.where.split(":", 1)[1], f.message) for f in found] == [(
        f"{line}:3", f"attribute '{name}' of puzzle 'identity' takes a name the cue-visibility scorer uses for its "
        "own columns")]
    assert found[0].hint is not None and found[0].hint.startswith(f"rename the attribute, e.g. 'person_{name}'")
