"""Conversations played turn by turn: answered turns parsed like the row's answer, and user turns filled in
from the answers before them (`{{ NAME.answer }}`, `{{ NAME.option }}`, `{{ NAME.other }}`,
`{{ NAME.response }}`, spec_audits.contract.suite_terms.TURN_SLOTS)."""

from __future__ import annotations

import re
from typing import Any

from spec_audits.contract.suite_model import TurnAnswer
from spec_audits.contract.suite_terms import TURN_SLOT, TURN_SLOTS
from spec_audits.runner.answers import parse_answer, parse_answer_line


class ConversationStopped(Exception):
    """A user turn reads an answer the conversation does not have: the conversation ends there."""


def read_answer(text: str | None, tokens: tuple[str, ...], answer_line: str | None) -> str | None:
    """A reply's answer token: from its last line where the decode says so (`answer_line`), else the reply."""
    return parse_answer(text, tokens) if answer_line is None else parse_answer_line(text, tokens, answer_line)


def answered_turn(spec: TurnAnswer, index: int, text: str | None, answer_line: str | None) -> dict[str, Any]:
    """What results.jsonl records of an answered turn (ResultRow.turn_answers)."""
    answer = read_answer(text, tuple(spec.answers), answer_line)
    return {"turn": index, "response": text, "answer": answer,
            "outcome": spec.answers.get(answer) if answer is not None else None}


def fill_turn(text: str, answered: dict[str, tuple[TurnAnswer, dict[str, Any]]], index: int) -> str:
    """A user turn with every `{{ NAME.slot }}` replaced by what answered turn NAME gave, in one pass."""

    def value(match: re.Match[str]) -> str:
        name, slot = match.groups()
        if name not in answered or slot not in TURN_SLOTS:
            raise ConversationStopped(f"turn {index} reads {name}.{slot}, which no earlier answered turn gives")
        spec, turn = answered[name]
        if slot == "response":
            return str(turn["response"] or "")
        token = turn["answer"]
        if token is None:
            raise ConversationStopped(f"turn {index} reads {name}.{slot}, but turn '{name}' gave no valid answer")
        options = spec.options or spec.meanings or {t: t for t in spec.answers}
        if slot == "answer":
            return str(token)
        if slot == "option":
            return str(options.get(token, token))
        others = [text for other, text in options.items() if other != token]
        if len(others) != 1:
            raise ConversationStopped(f"turn {index} reads {name}.other, but '{name}' has {len(options)} options")
        return others[0]

    return TURN_SLOT.sub(value, text)
