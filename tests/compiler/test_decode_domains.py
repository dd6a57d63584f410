"""The decode settings' domains have one source (suite_terms.SETTING_DOMAINS): the compiler checks a spec's values
with it without pydantic (valid_decode_value), and the row model validates a suite's rows with a pydantic Field
made of it. Both must give every value the same verdict, and the verdicts below are the ones the row model gave
when its domains were written as pydantic Fields by hand, but for an answer_line of only \x1c to \x1f (Python's
whitespace, not the Rust regex engine's), now refused: a reply's lines are split at them."""

from __future__ import annotations

import enum
import math
from typing import Any

import pytest
from pydantic import TypeAdapter, ValidationError

from spec_audits.contract.suite_model import Decode, SuiteRow
from spec_audits.contract.suite_terms import DECODE_KEYS, SETTING_DOMAINS, decode_domain, valid_decode_value


class Text(str):
    pass


class Whole(int):
    pass


class Real(float):
    pass


class Level(enum.IntEnum):
    THREE = 3


class Texts(list[str]):
    pass


GRID: list[Any] = [
    0, 1, -1, 2, 3, -3, 0.0, -0.0, 0.5, 1.0, 2.5, -2.0, 2.0000001, -2.0000001, 1e-300, 1e308, 10**30, 2**63, 10**400,
    -10**400, True, False, None, math.nan, math.inf, -math.inf, "x", "", " ", "\n", "  a", "\x1c", "\x1f", "\x85",
    "\xa0", "\u3000", "1", "0.5", b"x", Text("a"), Whole(3), Real(0.5), Level.THREE, [], ["a"], ["a", 1], ["a", None],
    [["a"]], ("a",), Texts(["a"]), [Text("a")], {"a": 1},
]
ROW_MODEL = TypeAdapter(Decode)


def _model_accepts(name: str, value: Any) -> bool:
    try:
        ROW_MODEL.validate_python({name: value})
    except ValidationError:
        return False
    return True


@pytest.mark.parametrize("name", DECODE_KEYS)
def test_the_compiler_and_the_row_model_agree_on_every_value(name: str) -> None:
    disagree = [value for value in GRID if valid_decode_value(name, value) != _model_accepts(name, value)]
    assert disagree == []


def _accepted(name: str) -> list[Any]:
    return [value for value in GRID if valid_decode_value(name, value)]


def test_numbers_are_strict_and_bounded() -> None:
    assert list(map(repr, _accepted("temperature"))) == [
        "0", "1", "2", "3", "0.0", "-0.0", "0.5", "1.0", "2.5", "2.0000001", "1e-300", "1e+308", repr(10**30),
        repr(2**63), "inf", "3", "0.5", "<Level.THREE: 3>"]  # a bool, NaN and a number too large for a float: no
    assert list(map(repr, _accepted("top_p"))) == ["1", "0.5", "1.0", "1e-300", "0.5"]
    assert list(map(repr, _accepted("presence_penalty"))) == [
        "0", "1", "-1", "2", "0.0", "-0.0", "0.5", "1.0", "-2.0", "1e-300", "0.5"]  # neither infinity


def test_whole_numbers_take_no_float_and_no_bool() -> None:
    assert list(map(repr, _accepted("max_tokens"))) == ["1", "2", "3", repr(10**30), repr(2**63), repr(10**400), "3",
                                                        "<Level.THREE: 3>"]
    assert list(map(repr, _accepted("seed"))) == ["0", "1", "-1", "2", "3", "-3", repr(10**30), repr(2**63),
                                                  repr(10**400), repr(-10**400), "3", "<Level.THREE: 3>"]


def test_texts_and_lists_of_texts() -> None:
    texts = ["x", "", " ", "\n", "  a", "\x1c", "\x1f", "\x85", "\xa0", "\u3000", "1", "0.5", "a"]
    assert _accepted("reasoning_effort") == texts
    assert _accepted("stop") == [*texts, [], ["a"], ["a"], ["a"]]  # a list (of texts), never a tuple
    # something to read besides whitespace (Python's, which splits a reply's lines on \x1c too)
    assert _accepted("answer_line") == ["x", "  a", "1", "0.5", "a"]


def test_the_domains_name_every_setting_and_say_it_in_words() -> None:
    assert list(SETTING_DOMAINS) == list(DECODE_KEYS)
    assert decode_domain("top_p") == "a number in (0, 1]"
    schema = SuiteRow.model_json_schema()["$defs"]["DecodeSettings"]
    assert schema["properties"]["top_p"] == {
        "description": "a number in (0, 1]", "exclusiveMinimum": 0, "maximum": 1, "title": "Top P", "type": "number"}
    assert schema["additionalProperties"] is False


def test_the_row_models_messages_are_pydantics() -> None:
    with pytest.raises(ValidationError) as refused:
        ROW_MODEL.validate_python({"max_tokens": 1.0, "top_p": 0, "stop": ("a",), "answer_line": " "})
    assert [(error["loc"], error["msg"]) for error in refused.value.errors()] == [
        (("max_tokens",), "Input should be a valid integer"),
        (("top_p",), "Input should be greater than 0"),
        (("stop", "str"), "Input should be a valid string"),
        (("stop", "list[str]"), "Input should be a valid list"),
        (("answer_line",), "String should match pattern '\\S'"),
    ]
