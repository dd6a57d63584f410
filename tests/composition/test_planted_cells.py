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

import pytest

from spec_audits.compiler.build import compile_file
from spec_audits.contract.reader import read_suite
from tests.composition.matrix import Cell, cells, check_cell, write_cell
from tests.families.effects import cli_ok
from tests.runner.test_run_conversations import _run
from tests.stub_server import StubServer, _completion
from tests.support import ROOT

GOLDEN = (math.sqrt(5) - 1) / 2  # low-discrepancy draws: a level's sampled shares follow its planted ones closely
Dist = dict[str, float]  # meaning -> probability


@dataclass(frozen=True)
class Plant:
    """What a family's stub plants per row (from the row's cell and its meanings), and how the planted effect is
    read back from the score's summary.json."""

    dist: Callable[[dict[str, Any], list[str]], Dist]
    recovered: Callable[[dict[str, Any], str], list[tuple[float, float, float]]]  # (planted, low, high)


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


def _effects_recovered(summary: dict[str, Any], form: str) -> list[tuple[float, float, float]]:
    (model,) = summary["models"].values()
    (target, found), *_ = model["targets"].items()
    span = 1.0
    if target == "value":
        meanings = form.split("..")
        size = int(meanings[1]) - int(meanings[0].split()[-1]) + 1
        span = round(size * 0.6) - round(size * 0.3)
    ages = {c["level"]: c for c in found["contrasts"] if c["term"] == "age"}
    return [(SHIFT[level] * span, ages[level]["low"], ages[level]["high"]) for level in ("young", "old")]


PLANTS = {"effects": Plant(_effects_dist, _effects_recovered)}


class MeaningStub(StubServer):
    """Knows each row by its messages; answers with the token that displays the meaning it draws from the
    plant (sample mode: a low-discrepancy draw per cell level, so a level's shares follow the planted ones), or
    in logprob mode returns the planted probabilities on the tokens displaying each meaning."""

    def __init__(self, rows: dict[str, Any], plant: Plant) -> None:
        super().__init__()
        self.rows, self.plant = rows, plant
        self.draws: dict[str, int] = {}

    def completion(self, body: dict[str, Any]) -> dict[str, Any]:
        row = self.rows[json.dumps(body["messages"], sort_keys=True)]
        token_of = {meaning: token for token, meaning in row.answers.items()}
        dist = self.plant.dist(row.cell, list(token_of))
        level = json.dumps({k: v for k, v in row.cell.items() if k != "scenario"}, sort_keys=True)
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


def _planted_cells() -> list[Cell]:
    return [c for c in cells() if c.conversation == "none" and c.family in PLANTS]


@pytest.mark.parametrize("cell", _planted_cells(), ids=lambda c: c.id)
def test_cells_recover_a_planted_effect_by_meaning(cell: Cell, tmp_path: Path) -> None:
    if check_cell(cell, tmp_path / "check"):
        pytest.skip("refused at spec check (test_every_cell_is_refused_with_located_errors_or_covered)")
    suite, run = tmp_path / "suite", tmp_path / "run"
    compile_file(write_cell(cell, tmp_path / "spec"), suite, allowed=[ROOT / "specs"])
    rows = {json.dumps([m.model_dump(exclude_none=True) for m in row.messages], sort_keys=True): row
            for row in read_suite(suite).rows}
    _run(suite, run, MeaningStub(rows, PLANTS[cell.family]), concurrency=1)
    cli_ok("score", str(run), "-o", str(run / "score"))
    summary = json.loads((run / "score" / "summary.json").read_text(encoding="utf-8"))
    for planted, low, high in PLANTS[cell.family].recovered(summary, cell.form):
        assert low <= planted <= high, (planted, low, high)
        assert cell.mode == "sample" or not low <= 0 <= high, (planted, low, high)  # logprob: also detected
