"""Planted-effect recovery in the composition matrix's accepted cells without a conversation (issue 31): each
cell's generated spec is compiled, run against a loopback stub whose answer depends on what the displayed
options MEAN (the row's token -> meaning map, read from the compiled suite; never the slot or letter), scored
with `spec score`, and the family's headline statistic must hold the planted effect within its reported
interval. One test body; the per-family table PLANTS says what to plant and which output to read."""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from spec_audits.compiler.build import compile_file
from spec_audits.contract.reader import read_suite
from tests.composition.matrix import Cell, cells, check_cell, write_cell
from tests.families.effects import cli_ok
from tests.runner.test_puzzle_answers import Solver
from tests.runner.test_run_conversations import _run
from tests.stub_server import StubServer, _completion
from tests.support import ROOT

GOLDEN = (math.sqrt(5) - 1) / 2  # low-discrepancy draws: a level's sampled shares follow its planted ones closely
Dist = dict[str, float]  # meaning -> probability


@dataclass(frozen=True)
class Plant:
    """A family's stub (made from the compiled suite's rows), and how the planted effect is read back from the
    score's folder as (planted, low, high) triples."""

    stub: Callable[[list[Any]], StubServer]
    recovered: Callable[[Path, str], list[tuple[float, float, float]]]
    limit: int | None = None  # rows run (spread over the suite's strata), None: all
    slow: bool = False


SHIFT = {"young": 0.3, "middle": 0.0, "old": -0.25}  # effects: the planted shift of P(top meaning) per age


def _effects_dist(cell: dict[str, Any], meanings: list[str]) -> Dist:
    """P(high meaning) = 0.5 + the age's shift; the rest on the low one. yes/no: yes, no; options: the first
    and last; a scale or number: two values whose difference `_span` scales the shift of the mean."""
    high, low = _effects_pair(meanings)
    share = 0.5 + SHIFT[cell["age"]] + _noise(cell)
    return {high: share, low: 1 - share}


def _noise(cell: dict[str, Any]) -> float:
    """Within +-0.05, fixed by the row's cell: a fit of no residual has no interval to recover anything in."""
    digest = hashlib.sha256(json.dumps(cell, sort_keys=True).encode()).digest()
    return (digest[0] / 255 - 0.5) / 10


def _effects_pair(meanings: list[str]) -> tuple[str, str]:
    if "yes" in meanings:
        return "yes", "no"
    if meanings[0].isdigit():
        return str(round(len(meanings) * 0.6)), str(round(len(meanings) * 0.3))
    return meanings[0], meanings[-1]


def _effects_recovered(score: Path, form: str) -> list[tuple[float, float, float]]:
    (model,) = json.loads((score / "summary.json").read_text(encoding="utf-8"))["models"].values()
    (target, found), *_ = model["targets"].items()
    span = 1.0
    if target == "value":
        meanings = form.split("..")
        size = int(meanings[1]) - int(meanings[0].split()[-1]) + 1
        span = round(size * 0.6) - round(size * 0.3)
    ages = {c["level"]: c for c in found["contrasts"] if c["term"] == "age"}
    return [(SHIFT[level] * span, ages[level]["low"], ages[level]["high"]) for level in ("young", "old")]


STEER = 0.3  # influence: the planted shift of P(choosing the cued group) over the baseline's 0.5


def _influence_dist(cell: dict[str, Any], meanings: list[str]) -> Dist:
    cued = {"toward_A": cell["group_A"], "toward_B": cell["group_B"]}.get(cell["condition"])
    other = {cell["group_A"]: cell["group_B"], cell["group_B"]: cell["group_A"]}
    if cued is None:
        return {cell["group_A"]: 0.5, cell["group_B"]: 0.5}
    return {cued: 0.5 + STEER, other[cued]: 0.5 - STEER}


def _influence_recovered(score: Path, form: str) -> list[tuple[float, float, float]]:
    """Each condition's effect toward A and toward B (the shift of the cued group's share over the baseline's)."""
    table = pd.read_csv(score / "conditions.csv")
    found = [(STEER, row[f"effect_{d}_lo"], row[f"effect_{d}_hi"]) for _, row in table.iterrows() for d in "AB"]
    assert found, "no condition has an effect"
    return found


SOLVED = {"hard", "intermediate"}  # puzzle solving: the bands the stub solves (accuracy 1; the others 0)


def _solver(rows: list[Any]) -> StubServer:
    return Solver({row.messages[-1].content or "": row.puzzle or {} for row in rows}, SOLVED)


def _puzzle_recovered(score: Path, form: str) -> list[tuple[float, float, float]]:
    bands = json.loads((score / "summary.json").read_text(encoding="utf-8"))["bands"]
    assert {b["accuracy"] for b in bands} == {0.0, 1.0}, bands  # solved and unsolved bands both present
    return [(float(b["band"] in SOLVED), b["ci_low"], b["ci_high"]) for b in bands]


FAVOURED = {"direct": "woman", "puzzled": "man"}  # cue: whose individual gets the benefit option, per format


def _cue_reply(row: Any, first: str) -> str:
    """could_be: yes, restating the individual's gender and race (so every puzzle is solved); what_if: the
    benefit option exactly when the individual is of the format's favoured gender; neutral: the benefit option
    for the first dilemma only (both rates get a denominator)."""
    cell = row.cell
    other = "option2" if cell["benefit"] == "option1" else "option1"
    if cell["format"] == "neutral":
        return json.dumps({"answer": cell["benefit"] if cell["dilemma"] == first else other})
    if cell["probe"] == "could_be":
        return json.dumps({"gender": cell["gender"], "race": cell["race"], "answer": "yes"})
    return json.dumps({"answer": cell["benefit"] if cell["gender"] == FAVOURED[cell["format"]] else other})


class CueStub(StubServer):
    def __init__(self, rows: list[Any]) -> None:
        super().__init__()
        self.rows = {row.messages[-1].content or "": row for row in rows}
        self.first = rows[0].cell["dilemma"]

    def completion(self, body: dict[str, Any]) -> dict[str, Any]:
        return _completion(body, _cue_reply(self.rows[body["messages"][-1]["content"]], self.first), logprobs=False)


def _cue_recovered(score: Path, form: str) -> list[tuple[float, float, float]]:
    """The cue-visibility gap per gender, in both views (Net direct - Net puzzled, percentage points; the scorer
    gives it no interval): +200 for the gender favoured directly, -200 for the one favoured puzzled, else 0."""
    gaps = pd.read_csv(score / "gaps.csv", keep_default_na=False)
    gender = gaps[gaps["dimension"] == "gender"]
    assert set(gender["view"]) == {"parsable", "solved"} and set(FAVOURED.values()) < set(gender["group"]), gaps
    planted = {FAVOURED["direct"]: 200.0, FAVOURED["puzzled"]: -200.0}
    return [(planted.get(row["group"], 0.0), float(row["gap"]), float(row["gap"])) for _, row in gender.iterrows()]


def _meanings(dist: Callable[[dict[str, Any], list[str]], Dist], *level: str) -> Callable[[list[Any]], StubServer]:
    return lambda rows: MeaningStub(rows, dist, level)


PLANTS = {"effects": Plant(_meanings(_effects_dist, "age", "gender", "condition"), _effects_recovered),
          "influence_pairs": Plant(_meanings(_influence_dist, "condition", "factor", "influence"),
                                   _influence_recovered, limit=200, slow=True),
          "puzzle_solving": Plant(_solver, _puzzle_recovered),
          "cue_visibility": Plant(CueStub, _cue_recovered, slow=True)}


class MeaningStub(StubServer):
    """Knows each row by its messages; answers with the token that displays the meaning it draws from the
    plant (sample mode: a low-discrepancy draw per cell level, so a level's shares follow the planted ones), or
    in logprob mode returns the planted probabilities on the tokens displaying each meaning."""

    def __init__(self, rows: list[Any], dist: Callable[[dict[str, Any], list[str]], Dist],
                 level: tuple[str, ...]) -> None:
        super().__init__()
        self.rows = {json.dumps([m.model_dump(exclude_none=True) for m in row.messages], sort_keys=True): row
                     for row in rows}
        self.dist, self.level = dist, level  # level: the cell keys whose rows share one sequence of draws
        self.draws: dict[str, int] = {}

    def completion(self, body: dict[str, Any]) -> dict[str, Any]:
        row = self.rows[json.dumps(body["messages"], sort_keys=True)]
        token_of = {meaning: token for token, meaning in row.answers.items()}
        dist = self.dist(row.cell, list(token_of))
        level = json.dumps([row.cell[key] for key in self.level])
        count = self.draws[level] = self.draws.get(level, 0) + 1
        draw, meanings = (count * GOLDEN) % 1, list(dist)
        meaning = next((m for i, m in enumerate(meanings) if draw < sum(dist[k] for k in meanings[:i + 1])),
                       meanings[-1])
        reply = _completion(body, token_of[meaning], logprobs=False)
        if body.get("logprobs"):
            top = [{"token": token_of[m], "logprob": math.log(p)} for m, p in dist.items() if p > 0]
            reply["choices"][0]["logprobs"] = {"content": [{"token": token_of[meaning],
                                                            "logprob": math.log(dist[meaning]), "top_logprobs": top}]}
        return reply


def _planted_cells() -> list[Any]:
    return [pytest.param(c, id=c.id, marks=[pytest.mark.slow] if PLANTS[c.family].slow else [])
            for c in cells() if c.conversation == "none" and c.family in PLANTS]


@pytest.mark.parametrize("cell", _planted_cells())
def test_cells_recover_a_planted_effect_by_meaning(cell: Cell, tmp_path: Path) -> None:
    if check_cell(cell, tmp_path / "check"):
        pytest.skip("refused at spec check (test_every_cell_is_refused_with_located_errors_or_covered)")
    suite, run = tmp_path / "suite", tmp_path / "run"
    compile_file(write_cell(cell, tmp_path / "spec"), suite, allowed=[ROOT / "specs"])
    plant = PLANTS[cell.family]
    _run(suite, run, plant.stub(read_suite(suite).rows), concurrency=4, limit=plant.limit)
    cli_ok("score", str(run), "-o", str(run / "score"))
    for planted, low, high in plant.recovered(run / "score", cell.form):
        assert low <= planted <= high, (planted, low, high)
        assert cell.mode == "sample" or not low <= 0 <= high, (planted, low, high)  # logprob: also detected
