"""Follow-up turns and their judges as suite rows carry them: `reply json`, and the default judge prompt."""

from __future__ import annotations

from pathlib import Path

import pytest

from spec_audits.compiler.dispatch.build import compile_file
from spec_audits.compiler.errors import SpecError
from tests.support import suite_rows

SPEC = '''suite tiny "Tiny"
seed 1
factor color:
  A red "red people" / "red person"
  B blue "blue people" / "blue person"
template question """
Pick one.
A: {{ first.n }} {{ first.noun }}
B: {{ second.n }} {{ second.noun }}
"""
influence nudge append "Choose {{ target.plural }}."
followup why "Why?" judge labels yes, no reply json
followup how "How sure are you?" judge labels sure, unsure reply label model "openai/gpt-4o-mini"
followup own "Anything else?" judge labels yes, no reply json prompt "Label it: {{ reply }}"
design main:
  factors *
  influences *
  conditions baseline, toward A, toward B
  sizes n_A in 1..2, n_B in 1..2
  order both
  answer choice "A" | "B"
  followups why, how, own
'''


def test_judges_carry_their_reply_format_and_a_default_prompt_naming_the_labels(tmp_path: Path) -> None:
    spec = tmp_path / "tiny.spec"
    spec.write_text(SPEC, encoding="utf-8")
    compile_file(spec, tmp_path / "out")
    first, *others = suite_rows(tmp_path / "out")
    assert all(row["followups"] == first["followups"] for row in others)
    assert first["followups"] == [
        {"name": "why", "content": "Why?", "judge": {
            "labels": ["yes", "no"], "model": None, "reply": "json",
            "prompt": "Classify the reply below into exactly one of the labels yes, no.\n\nReply:\n{{ reply }}\n\n"
                      'Answer with JSON only: {"label": "<one of the labels>", "reason": "<one sentence>"}'}},
        # `reply label` is the default, so rows leave it out
        {"name": "how", "content": "How sure are you?", "judge": {
            "labels": ["sure", "unsure"], "model": "openai/gpt-4o-mini",
            "prompt": "Classify the reply below into exactly one of the labels sure, unsure.\n\nReply:\n{{ reply }}"
                      "\n\nAnswer with the label only."}},
        {"name": "own", "content": "Anything else?", "judge": {
            "labels": ["yes", "no"], "model": None, "reply": "json", "prompt": "Label it: {{ reply }}"}},
    ]


def test_a_followup_turn_carries_its_own_decode_settings(tmp_path: Path) -> None:
    spec = tmp_path / "tiny.spec"
    spec.write_text(SPEC.replace('followup why "Why?" judge', 'followup why "Why?" decode max_tokens 200, '
                                 'temperature 0.5 judge'), encoding="utf-8")
    compile_file(spec, tmp_path / "out")
    followups = suite_rows(tmp_path / "out")[0]["followups"]
    assert [entry.get("decode") for entry in followups] == [{"max_tokens": 200, "temperature": 0.5}, None, None]


def test_a_followups_decode_settings_are_checked_like_a_designs(tmp_path: Path) -> None:
    spec = tmp_path / "tiny.spec"
    spec.write_text(SPEC.replace('followup why "Why?" judge', 'followup why "Why?" decode max_tokens 0, '
                                 'max_token 5 judge'), encoding="utf-8")
    with pytest.raises(SpecError) as caught:
        compile_file(spec, tmp_path / "out")
    assert [(d.span.line, d.span.column, d.message) for d in caught.value.diagnostics] == [
        (12, 42, "unknown decode setting 'max_token'"),
        (12, 28, "max_tokens must be a whole number >= 1, got 0"),
    ]


OPTIONS = 'followup ask "You chose {{ answer }}. Why not {{ second.option }}, the {{ second.n }} {{ second.noun }}?"'


def test_a_followup_sees_the_rows_options_and_leaves_the_first_answer_to_the_runner(tmp_path: Path) -> None:
    spec = tmp_path / "tiny.spec"
    spec.write_text(SPEC.replace("followups why, how, own", "followups ask").replace(
        'followup why "Why?"', f"{OPTIONS}\nfollowup why \"Why?\""), encoding="utf-8")
    compile_file(spec, tmp_path / "out")
    for row in suite_rows(tmp_path / "out"):
        n_b, second = (row["cell"]["n_B"], "B") if row["cell"]["order"] == "AB" else (row["cell"]["n_A"], "A")
        noun = {"A": "red", "B": "blue"}[second] + (" person" if n_b == 1 else " people")
        assert row["followups"] == [{"name": "ask", "content": f"You chose {{{{ answer }}}}. Why not B, the {n_b} "
                                                               f"{noun}?"}]


@pytest.mark.parametrize(("followup", "where", "message", "hint"), [
    ('followup ask "Why not {{ secnd.option }}?"', (12, 26), "undefined template variable 'secnd' in follow-up 'ask'",
     "did you mean 'second'?"),
    ('followup ask "Why not {{ second.opton }}?"', (12, 33),
     "undefined template variable 'second.opton' in follow-up 'ask'", "did you mean 'option'?"),
    ('followup ask "{% if answer == \'A\' %}Why A?{% endif %}"', (12, 21),
     "'answer' in follow-up 'ask' is filled in when the text is sent, so it can only be shown as it is",
     "write it alone: {{ answer }}"),
    ('followup ask "Why?" judge labels yes, no prompt "Given {{ answer }}: {{ reply }}"', (12, 59),
     "undefined template variable 'answer' in the judge prompt of follow-up 'ask'", "valid names: 'conversation', "
     "'reply'"),
    ('followup ask "Why?" judge labels yes, no prompt "{{ reply | upper }}"', (12, 53),
     "'reply' in the judge prompt of follow-up 'ask' is filled in when the text is sent, so it can only be shown "
     "as it is", "write it alone: {{ reply }}"),
])
def test_a_name_a_followup_or_its_judge_cannot_see_is_a_located_error(
        followup: str, where: tuple[int, int], message: str, hint: str, tmp_path: Path) -> None:
    spec = tmp_path / "tiny.spec"
    spec.write_text(SPEC.replace("followups why, how, own", "followups ask").replace(
        'followup why "Why?"', f"{followup}\nfollowup why \"Why?\""), encoding="utf-8")
    with pytest.raises(SpecError) as caught:
        compile_file(spec, tmp_path / "out")
    assert [((d.span.line, d.span.column), d.message, d.hint) for d in caught.value.diagnostics] == [
        (where, message, hint)]
