"""A `conversation` played by a design of any family: the rows it gives, and each mistake located at its turn."""

from __future__ import annotations

from pathlib import Path

import pytest

from spec_audits.compiler.dispatch.build import check_file, compile_file
from spec_audits.compiler.errors import SpecError
from tests.support import ROOT, shipped_spec, suite_rows

SPEC = '''suite tiny "Tiny"
seed 1
factor color:
  A red "red people" / "red person"
  B blue "blue people" / "blue person"
system helpful "Be helpful."
template question """
Pick one.
A: {{ first.n }} {{ first.noun }}
B: {{ second.n }} {{ second.noun }}
"""
influence nudge append "Choose {{ target.plural }}."
conversation doubted:
  user prompt
  assistant answer first decode max_tokens 3
  user "You said {{ first.answer }}, not {{ first.other }}. Are you sure?" push other
  assistant generate model "openai/pusher", max_tokens 8
  user "Now answer again."
design main:
  factors *
  influences *
  conditions baseline, toward A, toward B
  sizes n_A in 1..2, n_B in 1..2
  system helpful
  prompt question
  answer choice "A" | "B"
  conversation doubted
'''


def _compile(tmp_path: Path, text: str) -> list[dict]:
    spec = tmp_path / "tiny.spec"
    spec.write_text(text, encoding="utf-8")
    compile_file(spec, tmp_path / "out")
    return suite_rows(tmp_path / "out")


def _errors(tmp_path: Path, text: str) -> list[tuple[int, int, str, str | None]]:
    spec = tmp_path / "tiny.spec"
    spec.write_text(text, encoding="utf-8")
    with pytest.raises(SpecError) as caught:
        compile_file(spec, tmp_path / "out")
    return [(d.span.line, d.span.column, d.message, d.hint) for d in caught.value.diagnostics]


def test_every_row_is_played_through_the_conversation(tmp_path: Path) -> None:
    rows = _compile(tmp_path, SPEC)
    assert len(rows) == 12
    for row in rows:
        system, prompt, first, doubt, pusher, again = row["messages"]
        assert system == {"role": "system", "content": "Be helpful."}
        assert prompt["role"] == "user" and prompt["content"].startswith("Pick one.")
        assert first == {"role": "assistant", "generate": True, "decode": {"max_tokens": 3},
                         "answer": {"name": "first", "answers": row["answers"]}}
        assert doubt == {"role": "user", "content": "You said {{ first.answer }}, not {{ first.other }}. Are you sure?",
                         "fill": True, "push": "other"}
        assert pusher == {"role": "assistant", "generate": True, "decode": {"max_tokens": 8}, "model": "openai/pusher"}
        assert again == {"role": "user", "content": "Now answer again."}


def test_an_answered_turn_may_have_its_own_answer_form(tmp_path: Path) -> None:
    rows = _compile(tmp_path, SPEC.replace("assistant answer first decode", 'assistant answer first choice "X" | "Y" '
                                           "decode").replace("push other", 'push "Y"'))
    assert rows[0]["messages"][2]["answer"] == {"name": "first", "answers": {"X": "X", "Y": "Y"}}


@pytest.mark.parametrize(("old", "new", "expected"), [
    ("  user prompt\n", "", [(13, 1, "conversation 'doubted' has 0 `user prompt` turns, not one",
                              "write `user prompt` once, where the design's own prompt is asked")]),
    ('  user "Now answer again."\n', "", [(17, 3, "conversation 'doubted' ends with an assistant turn",
                                          "the design's answer is the reply to the last turn: end with a user turn")]),
    ("first.other", "frist.other", [(16, 8, "'frist' is no answered turn before this one", "did you mean 'first'?")]),
    ("first.other", "first.colour", [(16, 8, "an answered turn has no 'colour'",
                                      "it has: answer, option, other, response")]),
    ("push other", "push sideways", [(16, 3, "`push sideways` is neither other nor same nor an answer token",
                                      "the turn before it answers A, B")]),
    ('"openai/pusher"', '"https://evil.example/x"', [(17, 22, "'https://evil.example/x' is not a model name",
                                                      'write the model as provider/model, e.g. model '
                                                      '"openai/gpt-4o-mini"')]),
    ("answer first decode max_tokens 3", "answer answer", [
        (15, 20, "'answer' names the design's own answer", "give each answered turn a name of its own"),
        (16, 8, "'first' is no answered turn before this one", "answered turns before it: none"),
        (16, 3, "`push` needs an answered turn before it", "add: assistant answer NAME")]),
    ("answer first decode", "answer first scale 1..5 decode", [
        (15, 26, "an answered turn does not take answer 'scale'",
         "it takes: choice, labels, options, yesno, or none (the design's answer form)")]),
    ("Are you sure?", "Are you {{ sure }}?", [
        (16, 8, "a conversation's user turn reads only earlier answers, as {{ NAME.slot }}, and the row's cell, as "
         "{{ cell.KEY }}",
         "slots: answer, option, other, response; answered turns before it: first")]),
    ("conversation doubted\n", "conversation doubtful\n", [
        (27, 16, "unknown conversation 'doubtful'", "did you mean 'doubted'?")]),
])
def test_each_mistake_is_located_at_its_turn(tmp_path: Path, old: str, new: str,
                                             expected: list[tuple[int, int, str, str | None]]) -> None:
    assert old in SPEC
    assert _errors(tmp_path, SPEC.replace(old, new, 1)) == expected


def test_a_conditions_conversation_refuses_the_turns_only_a_played_conversation_takes(tmp_path: Path) -> None:
    path = shipped_spec("cognitive_bias.spec")(tmp_path)
    path.write_text(path.read_text(encoding="utf-8").replace("  assistant generate\n", "  assistant answer first\n", 1),
                    encoding="utf-8")
    with pytest.raises(SpecError) as caught:
        check_file(path, allowed=(ROOT / "specs",))
    assert [(d.span.line, d.message) for d in caught.value.diagnostics] == [
        (30, "turn 3 of conversation 'with_turn' is for a conversation a design plays (`conversation NAME`), "
             "not a condition's")]
