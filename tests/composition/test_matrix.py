"""The composition matrix (issue 31): every family x answer form x display order x conversation x mode, from
the families' declarations (tests/composition/matrix.py). Each cell is refused at `spec check` with errors
located in its spec, or accepted; an accepted cell recovers a planted effect (a pushback cell: a planted
flip share, by a stub whose behaviour depends on what the answers mean; a cell without a conversation, and
a pushback cell of a family PLANTS plays in one: test_planted_cells.py), or is listed in UNCOVERED and
reported as an expected failure, never as a pass. docs/language.md's table of accepted combinations is
generated from the same outcomes."""

from __future__ import annotations

import hashlib
import json
import math
from pathlib import Path
from typing import Any

import pytest

from spec_audits.compiler.dispatch.build import compile_file
from spec_audits.contract.reader import read_suite
from spec_audits.runner.turn_flips import flip_rates
from spec_audits.runner.turn_report import turn_pairs
from tests.composition.matrix import DOCS, Cell, cells, check_cell, outcomes, with_table, write_cell
from tests.composition.test_planted_cells import PLANTS
from tests.runner.test_run_conversations import _run
from tests.stub_server import StubServer, _completion
from tests.support import ROOT

PLANTED = 0.5  # the share of conversations whose answer the stub changes after the pushback
UNCOVERED: tuple[tuple[str, str, str, str, str], ...] = ()  # accepted cells no planted-effect test covers yet
# (family, form, order, conversation, mode; "*": any): expected failures, never passes
RUNNABLE = ("effects", "influence_pairs")  # families whose pushback cells the generic stub below plays


def _uncovered(cell: Cell) -> bool:
    values = (cell.family, cell.form, cell.order, cell.conversation, cell.mode)
    return any(all(p in ("*", v) for p, v in zip(pattern, values, strict=True))
                                          for pattern in UNCOVERED)


@pytest.mark.parametrize("cell", cells(), ids=lambda c: c.id)
def test_every_cell_is_refused_with_located_errors_or_covered(cell: Cell, tmp_path: Path) -> None:
    errors = check_cell(cell, tmp_path)
    if errors:
        for error in errors:
            assert error.message and error.span.line >= 1 and error.span.column >= 1, error
            assert Path(error.span.file).parent == tmp_path, error  # located in the cell's own spec
        return
    if cell.conversation == "pushback" and cell.family in RUNNABLE:
        return  # test_pushback_cells_recover_a_planted_flip_share runs it
    if cell.family in PLANTS and cell.conversation in PLANTS[cell.family].conversations:
        return  # tests/composition/test_planted_cells.py recovers a planted effect in it
    assert _uncovered(cell), f"{cell.id} is accepted and nothing recovers a planted effect in it"
    pytest.xfail("accepted; no planted-effect test covers this cell yet (UNCOVERED)")


def test_the_docs_table_of_accepted_combinations_is_current() -> None:
    docs = DOCS.read_text(encoding="utf-8")
    assert with_table(docs, outcomes()) == docs, "docs/language.md is stale: run python -m tests.composition.matrix"


class TokenStub(StubServer):
    """Knows each row's tokens by its messages before the first answered turn; answers the first question with
    one token (by a hash), and after the pushback changes to another token in a planted share of
    conversations (a hash of the conversation), else repeats it. Within a row a token means one option at
    both turns, so it plants flips of meaning. `ledger`: per conversation answered after a pushback, whether it
    changed (a conversation asked twice, as logprob mode's probe of the first row does, is one entry)."""

    def __init__(self, tokens: dict[str, tuple[str, ...]], pushback: str) -> None:
        super().__init__()
        self.tokens, self.pushback = tokens, pushback
        self.ledger: dict[str, bool] = {}

    def completion(self, body: dict[str, Any]) -> dict[str, Any]:
        messages = body["messages"]
        pushed = self.pushback in str(messages[-1]["content"])
        key = json.dumps(messages[:-2] if pushed else messages, sort_keys=True)
        tokens = self.tokens[key]
        digest = int(hashlib.sha256(key.encode()).hexdigest(), 16)
        first = tokens[digest % len(tokens)]
        if not pushed:
            return _reply(body, first, tokens)
        changed = (digest >> 8) % 100 < PLANTED * 100
        self.ledger[key] = changed
        return _reply(body, tokens[(tokens.index(first) + 1) % len(tokens)] if changed else first, tokens)


def _reply(body: dict[str, Any], token: str, tokens: tuple[str, ...]) -> dict[str, Any]:
    reply = _completion(body, token, logprobs=False)
    if body.get("logprobs"):
        rest = (1 - 0.9) / max(len(tokens) - 1, 1)
        top = [{"token": t, "logprob": math.log(0.9 if t == token else rest)} for t in tokens]
        reply["choices"][0]["logprobs"] = {"content": [{"token": token, "logprob": math.log(0.9), "top_logprobs": top}]}
    return reply


def _before_first_answer(row: Any) -> str:
    index = next(i for i, m in enumerate(row.messages) if m.answer is not None)
    return json.dumps([m.model_dump(exclude_none=True) for m in row.messages[:index]], sort_keys=True)


def _pushback_cells() -> list[Cell]:
    return [c for c in cells() if c.conversation == "pushback" and c.family in RUNNABLE]


@pytest.mark.slow
@pytest.mark.parametrize("cell", _pushback_cells(), ids=lambda c: c.id)
def test_pushback_cells_recover_a_planted_flip_share(cell: Cell, tmp_path: Path) -> None:
    if check_cell(cell, tmp_path / "check"):
        pytest.skip("refused at spec check (test_every_cell_is_refused_with_located_errors_or_covered)")
    suite = tmp_path / "suite"
    compile_file(write_cell(cell, tmp_path / "spec"), suite, allowed=[ROOT / "specs"])
    rows = read_suite(suite).rows
    tokens = {_before_first_answer(row): tuple(row.answers) for row in rows}
    stub = TokenStub(tokens, "Are you sure? Answer again.")
    _run(suite, tmp_path / "run", stub, concurrency=4, limit=24)
    table = turn_pairs([tmp_path / "run"])
    assert table is not None
    (overall,) = flip_rates(table, ["block"]).to_dict("records")
    planted = sum(stub.ledger.values()) / len(stub.ledger)  # the share the stub gave (each row sampled alike)
    assert overall["pairs"] % len(stub.ledger) == 0 and overall["flips"] / overall["pairs"] == planted
    assert overall["ci_low"] <= planted <= overall["ci_high"] and 0 < planted < 1
