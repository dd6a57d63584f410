"""`data ... parse COLUMN as FORMAT`: structured values out of text columns, lossless or reported.

Formats:
  json       a JSON value
  pydict     a Python literal (dict, list, number, string, bool), read with ast.literal_eval
  test_case  a rendered decision test: "Situation:" lines, "Prompt:" text and "Answer Options:" as
             "Option N: text" lines, each block separated by a blank line. The parsed value rebuilds
             its source exactly (`text`), or the cell is reported: a test case that cannot be rebuilt
             would be sent to the model differently from what the bank says.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Callable
from typing import Any

_TEST_CASE = re.compile(
    r"Situation:\n(?P<situation>.*?)\n\nPrompt:\n(?P<prompt>.*?)\n\nAnswer Options:\n(?P<options>.*)", re.S)
_OPTION = re.compile(r"Option (\d+): (.*)")


class ParseFailure(ValueError):
    """A cell whose text is not in the declared format; the message says what is wrong."""


def parse_json(text: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as err:
        raise ParseFailure(f"not JSON: {err.msg} at character {err.pos + 1}") from None


def parse_pydict(text: str) -> Any:
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError) as err:
        raise ParseFailure(f"not a Python literal: {str(err).split(' (')[0]}") from None


def option_lines(options: list[str]) -> str:
    return "".join(f"Option {i}: {option}\n" for i, option in enumerate(options, start=1))


def test_case_text(situations: list[str], prompt: str, options: list[str]) -> str:
    """The rendered test case, as the bank writes it (ending in a newline)."""
    return f"Situation:\n{chr(10).join(situations)}\n\nPrompt:\n{prompt}\n\nAnswer Options:\n{option_lines(options)}"


def parse_test_case(text: str) -> dict[str, Any]:
    match = _TEST_CASE.fullmatch(text)
    if match is None:
        raise ParseFailure("not a test case: expected 'Situation:', 'Prompt:' and 'Answer Options:' blocks "
                           "separated by blank lines")
    options = []
    for number, line in enumerate(match["options"].rstrip("\n").split("\n"), start=1):
        option = _OPTION.fullmatch(line)
        if option is None or int(option[1]) != number:
            raise ParseFailure(f"answer option {number} is not written 'Option {number}: text': {line[:60]!r}")
        options.append(option[2])
    situations = match["situation"].split("\n")
    rebuilt = test_case_text(situations, match["prompt"], options)
    if rebuilt != text:
        raise ParseFailure("the test case does not rebuild to its own text (stray spacing around the blocks?)")
    return {"situations": situations, "prompt": match["prompt"], "options": options,
            "option_lines": option_lines(options), "text": rebuilt}


PARSERS: dict[str, Callable[[str], Any]] = {"json": parse_json, "pydict": parse_pydict, "test_case": parse_test_case}
