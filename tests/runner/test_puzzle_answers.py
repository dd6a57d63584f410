"""Puzzles as answers: a reply read as the puzzle's assignment (propositional and zebra alike), judged by
exact match and per-cell accuracy, and a planted solver that solves some bands scored as solving exactly
those."""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from spec_audits.contract.reader import read_results, read_suite
from spec_audits.contract.suite_model import SuiteRow
from spec_audits.contract.writer import suite_row
from spec_audits.puzzles import (
    AttributeConfig,
    PropositionalConfig,
    ZebraConfig,
    draw_selections,
    expect_of,
    generate_puzzle,
    generate_zebra,
)
from spec_audits.puzzles.answers import cell_accuracy, outcome_of, read_solution
from spec_audits.runner.puzzle_scores import accuracy_by_band, solved_table
from tests.runner.test_run_conversations import _run
from tests.stub_server import StubServer, _completion
from tests.support import write_suite

ZEBRA = ZebraConfig(name="z", positions=3, attributes=[
    AttributeConfig(name="colour", values=["red", "green", "blue"], refer="the {{ value }} house"),
    AttributeConfig(name="pet", values=["cat", "dog", "fish"], refer="the owner of the {{ value }}")])


@cache
def puzzles() -> tuple[dict[str, Any], ...]:
    """A certified puzzle per propositional band (2 each) and per zebra band."""
    config = PropositionalConfig(name="p")
    selection = draw_selections(config, 1, ("s",), 1)[0]
    found = [generate_puzzle(config, band, 1, ("p", band, k), selection)
             for band in ("easy", "intermediate", "hard") for k in range(2)]
    return (*found, *(generate_zebra(ZEBRA, band, 2, ("z", band)) for band in ("easy", "intermediate")))


def written(solution: dict[str, dict[str, str]], *, wrong: bool = False) -> str:
    lines = []
    for k, (person, cells) in enumerate(solution.items()):
        values = list(cells.values())
        if wrong and k == 0:
            values = values[1:]  # one cell left out
        lines.append(f"{person}: {', '.join(values)}")
    return "Here is my solution.\n" + "\n".join(lines)


def rows() -> list[SuiteRow]:
    return sorted((suite_row({
        "messages": [{"role": "user", "content": "Solve: " + " ".join(p["text"]) + f" [{i}]"}],
        "samples": 1, "cell": {"band": p["difficulty"]["band"], "family": p["family"]},
        "answers": {"solved": "solved", "unsolved": "unsolved"}, "answer_form": "solution",
        "decode": {"temperature": 0.0, "max_tokens": 200}, "puzzle": p, "expect": expect_of(p),
    }) for i, p in enumerate(puzzles())), key=lambda r: r.id)


def test_replies_are_read_as_assignments() -> None:
    zebra = puzzles()[-1]
    solution = zebra["solution"]
    assert read_solution(written(solution), zebra) == solution
    assert outcome_of(read_solution(written(solution), zebra), solution) == "solved"
    partial = read_solution(written(solution, wrong=True), zebra)
    assert cell_accuracy(partial, solution) == (5, 6) and outcome_of(partial, solution) == "unsolved"
    assert read_solution("Position 1: red house, cat\n**2** - green, dog", zebra) == {
        "1": {"colour": "red", "pet": "cat"}, "2": {"colour": "green", "pet": "dog"}}
    assert read_solution("1: red or green, cat", zebra) == {"1": {"pet": "cat"}}  # two colours: unread
    assert read_solution("1: red, cat\n1: blue, dog", zebra) == {}  # two lines for one person: unread
    assert outcome_of(read_solution("I cannot solve this.", zebra), solution) is None
    prop = puzzles()[0]
    assert read_solution(written(prop["solution"]), prop) == prop["solution"]


def test_a_solution_row_needs_its_puzzle_and_the_two_outcomes() -> None:
    body = {"messages": [{"role": "user", "content": "x"}], "samples": 1, "cell": {}, "decode": {},
            "answer_form": "solution", "answers": {"solved": "solved", "unsolved": "unsolved"}}
    with pytest.raises(ValidationError, match="needs a `puzzle` and `expect.solution`"):
        suite_row(body)
    with pytest.raises(ValidationError, match="has the answers solved, unsolved"):
        suite_row({**body, "answers": {"A": "a"}, "puzzle": puzzles()[0], "expect": expect_of(puzzles()[0])})


class Solver(StubServer):
    """Answers the certified solution for puzzles of the planted bands, a solution with a cell missing for
    the others."""

    def __init__(self, by_prompt: dict[str, dict[str, Any]], bands: set[str]) -> None:
        super().__init__()
        self.by_prompt = by_prompt
        self.bands = bands

    def completion(self, body: dict) -> dict:
        puzzle = self.by_prompt[body["messages"][-1]["content"]]
        wrong = puzzle["difficulty"]["band"] not in self.bands
        return _completion(body, written(puzzle["solution"], wrong=wrong))


def test_a_planted_solver_solves_exactly_its_bands(tmp_path: Path) -> None:
    suite = write_suite(tmp_path / "suite", rows())
    by_prompt = {r.messages[-1].content or "": r.puzzle or {} for r in read_suite(suite).rows}
    _run(suite, tmp_path / "run", Solver(by_prompt, {"easy", "hard"}))
    table = solved_table(read_suite(suite).rows, read_results(tmp_path / "run" / "results.jsonl"))
    scores = accuracy_by_band(table).set_index(["family", "band"])
    assert scores["accuracy"].to_dict() == {
        ("propositional", "easy"): 1.0, ("propositional", "hard"): 1.0, ("propositional", "intermediate"): 0.0,
        ("zebra", "easy"): 1.0, ("zebra", "intermediate"): 0.0}
    assert scores.loc[("propositional", "intermediate"), "cell_accuracy"] == pytest.approx(7 / 8)
    assert scores.loc[("zebra", "intermediate"), "cell_accuracy"] == pytest.approx(5 / 6)
    assert set(scores["items"]) == {1, 2} and set(scores["abstained"]) == {0}
