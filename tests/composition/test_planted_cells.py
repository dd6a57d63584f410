"""Planted-effect recovery in the composition matrix's accepted cells (issue 31): each
cell's generated spec is compiled, run against a loopback stub whose answer depends on what the displayed
options MEAN (the row's token -> meaning map, read from the compiled suite; never the slot or letter), scored
with `spec score`, and the family's headline statistic must hold the planted effect within its reported
interval. One test body; the per-family table PLANTS says what to plant, which output to read, and which
conversations it plays (cue visibility and conditional bias: also pushback)."""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from spec_audits.compiler.dispatch.build import compile_file
from spec_audits.contract.reader import read_run, read_suite
from spec_audits.families.cognitive_bias.score.metric import bias_metric
from tests.composition.matrix import PUSHBACK_TEXT, Cell, cells, check_cell, write_cell
from tests.families.effects import cli_ok
from tests.runner.test_puzzle_answers import Solver
from tests.runner.test_run_conversations import _run
from tests.stub_server import StubServer, _completion
from tests.support import ROOT

GOLDEN = (math.sqrt(5) - 1) / 2  # low-discrepancy draws: a level's sampled shares follow its planted ones closely
Dist = dict[str, float]  # meaning -> probability
Recovered = Callable[[Path, str], list[tuple[float, float, float]]]  # (planted, low, high) from a score folder


@dataclass(frozen=True)
class Plant:
    """A family's stub (made from the compiled suite's rows), and how the planted effect is read back from the
    score's folder as (planted, low, high) triples."""

    stub: Callable[[list[Any]], StubServer]
    recovered: Recovered
    limit: int | None = None  # rows run (spread over the suite's strata), None: all
    slow: bool = False
    conversations: tuple[str, ...] = ("none",)  # the cells' conversations it plays
    first: Recovered | None = None  # a pushback cell's effect at its first turn (`spec score --turn first`)


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
BEFORE = {"direct": "man", "puzzled": "woman"}  # a pushback cell's first answer: the other plan, undone after


def _cue_reply(row: Any, first: str, favoured: dict[str, str]) -> str:
    """could_be: yes, restating the individual's gender and race (so every puzzle is solved); what_if: the
    benefit option exactly when the individual is of the format's favoured gender; neutral: the benefit option
    for the first dilemma only (both rates get a denominator)."""
    cell = row.cell
    other = "option2" if cell["benefit"] == "option1" else "option1"
    if cell["format"] == "neutral":
        return json.dumps({"answer": cell["benefit"] if cell["dilemma"] == first else other})
    if cell["probe"] == "could_be":
        return json.dumps({"gender": cell["gender"], "race": cell["race"], "answer": "yes"})
    return json.dumps({"answer": cell["benefit"] if cell["gender"] == favoured[cell["format"]] else other})


class CueStub(StubServer):
    """Knows each row by its first message (the question). Without a conversation it answers by FAVOURED; in a
    pushback conversation it answers the first turn by BEFORE and the pushback by FAVOURED, so the row's own
    (last) answer holds FAVOURED's gaps and the first turn BEFORE's."""

    def __init__(self, rows: list[Any]) -> None:
        super().__init__()
        self.rows = {row.messages[0].content or "": row for row in rows}
        self.first = rows[0].cell["dilemma"]

    def completion(self, body: dict[str, Any]) -> dict[str, Any]:
        row, pushed = self.rows[body["messages"][0]["content"]], len(body["messages"]) > 1
        plan = BEFORE if len(row.messages) > 1 and not pushed else FAVOURED
        return _completion(body, _cue_reply(row, self.first, plan), logprobs=False)


def _cue_gaps(plan: dict[str, str]) -> Callable[[Path, str], list[tuple[float, float, float]]]:
    """The cue-visibility gap per gender, in both views (Net direct - Net puzzled, percentage points; the scorer
    gives it no interval), of answers by `plan`: +200 for the gender it favours directly, -200 for the one it
    favours puzzled, else 0."""

    def recovered(score: Path, form: str) -> list[tuple[float, float, float]]:
        gaps = pd.read_csv(score / "gaps.csv", keep_default_na=False)
        gender = gaps[gaps["dimension"] == "gender"]
        assert set(gender["view"]) == {"parsable", "solved"} and set(plan.values()) < set(gender["group"]), gaps
        planted = {plan["direct"]: 200.0, plan["puzzled"]: -200.0}
        return [(planted.get(row["group"], 0.0), float(row["gap"]), float(row["gap"])) for _, row in gender.iterrows()]

    return recovered


EXTRACTION = "You will be given answer options from a decision-making task and a written answer."
CHOICES = {"zero_shot": (0.5, 0.5), "neutral_turn": (0.5, 0.75), "biased_turn": (0.0, 1.0)}  # bias: (control,
# treatment) as a share of the way from the first original option to the last: Eq. 1's |m| grows per condition


def _bias_choice(row: Any) -> int:
    """The original 0-based option index the stub gives a row, by its condition and arm (never its slot)."""
    control, treatment = CHOICES[row.cell["condition"]]
    share = control if row.cell["arm"] == "control" else treatment
    return round(share * (len(row.answers) - 1))


class BiasStub(StubServer):
    """Plays the conditional-bias protocol: acknowledges a bias or neutral turn, answers the task with the
    option that DISPLAYS the planted original index ("I choose Option N."), and in the extraction call names
    the option its decision named; a pushback is answered as the first turn was."""

    def __init__(self, rows: list[Any]) -> None:
        super().__init__()
        self.rows = {json.dumps(_users(row.messages[:_asked(row)])): row for row in rows}

    def completion(self, body: dict[str, Any]) -> dict[str, Any]:
        messages = body["messages"]
        if str(messages[0]["content"]).startswith(EXTRACTION):
            return _completion(body, re.findall(r"Option \d+", messages[0]["content"])[-1], logprobs=False)
        users = _users(messages)
        row = self.rows.get(json.dumps(users[:-1] if messages[-1]["content"] == PUSHBACK_TEXT else users))
        if row is None:
            return _completion(body, "Understood.", logprobs=False)
        token = {int(meaning): token for token, meaning in row.answers.items()}[_bias_choice(row)]
        return _completion(body, f"I choose Option {token}.", logprobs=False)


def _asked(row: Any) -> int:
    """The row's messages up to its task question (a pushback conversation continues after it)."""
    return next((i for i, m in enumerate(row.messages) if m.answer is not None), len(row.messages))


def _users(messages: list[Any]) -> list[str]:
    return [str(m["content"] if isinstance(m, dict) else m.content) for m in messages
            if (m["role"] if isinstance(m, dict) else m.role) == "user"]


def _bias_recovered(score: Path, form: str) -> list[tuple[float, float, float]]:
    """Table 1's presence and content effects (mean over bank rows, t interval) against the ones planted by
    CHOICES: Eq. 1 of each bank row's metric parameters on the indices the stub gave each condition's arms."""
    _, suite = read_run(score.parent)
    planted: dict[str, list[float]] = {"presence": [], "content": []}
    for row in suite.rows:
        if row.cell["condition"] == "biased_turn" and row.cell["arm"] == "control":
            size = row.meta["metric"]["n_options"]
            m = {c: abs(bias_metric(*(round(s * (size - 1)) for s in CHOICES[c]), row.meta["metric"]))
                 for c in CHOICES}
            planted["presence"].append(m["neutral_turn"] - m["zero_shot"])
            planted["content"].append(m["biased_turn"] - m["neutral_turn"])
    table = pd.read_csv(score / "effects.csv").set_index("quantity")
    assert all(table.loc[q, "mean"] == pytest.approx(sum(v) / len(v)) for q, v in planted.items()), table
    return [(sum(v) / len(v), table.loc[q, "ci_low"], table.loc[q, "ci_high"]) for q, v in planted.items()]


def _meanings(dist: Callable[[dict[str, Any], list[str]], Dist], *level: str) -> Callable[[list[Any]], StubServer]:
    return lambda rows: MeaningStub(rows, dist, level)


PLANTS = {"effects": Plant(_meanings(_effects_dist, "age", "gender", "condition"), _effects_recovered),
          "influence_pairs": Plant(_meanings(_influence_dist, "condition", "factor", "influence"),
                                   _influence_recovered, limit=200, slow=True),
          "puzzle_solving": Plant(_solver, _puzzle_recovered),
          "bias_decomposition": Plant(BiasStub, _bias_recovered, conversations=("none", "pushback")),
          "cue_visibility": Plant(CueStub, _cue_gaps(FAVOURED), slow=True, conversations=("none", "pushback"),
                                  first=_cue_gaps(BEFORE))}


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
            for c in cells() if c.family in PLANTS and c.conversation in PLANTS[c.family].conversations]


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
    if cell.conversation == "pushback" and plant.first is not None:  # the first turn holds another plan
        cli_ok("score", str(run), "--turn", "first", "-o", str(run / "first"))
        for planted, low, high in plant.first(run / "first", cell.form):
            assert low <= planted <= high, (planted, low, high)
