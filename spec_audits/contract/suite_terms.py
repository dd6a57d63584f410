"""The suite contract's names and domains: the template slots the runner fills in, the decode settings a row
may carry and the judge model names a suite may hold.

spec_audits/contract/suite_model.py builds the row and manifest models on these; the compiler checks a spec
against them without building those models (a `spec check` never needs them: with the reader they cost it
about 10 ms of CPU).
"""

from __future__ import annotations

import re
from functools import cache
from typing import Annotated, Any, get_type_hints

from pydantic import ConfigDict, Field, TypeAdapter, ValidationError
from typing_extensions import TypedDict

FOLLOWUP_SLOTS = ("answer",)
"""Names a follow-up's content may hold as `{{ name }}`, filled in by the runner when it sends the turn:
the answer token of the first reply (its text when it gave none)."""
JUDGE_SLOTS = ("reply", "conversation")
"""Names a judge prompt may hold as `{{ name }}`, filled in by the runner: the reply to the follow-up, and
the whole conversation before the judge, one `Role: text` paragraph per turn."""
TURN_SLOTS = ("answer", "option", "other", "response")
"""What a conversation's user turn marked `fill` may read of an earlier answered turn NAME, as
`{{ NAME.slot }}`, filled in by the runner when it sends the turn: the answer token, the text of the option
chosen, the text of the one not chosen (two options only), and the reply's text."""
SOLUTION_OUTCOMES = ("solved", "unsolved")
"""The answer tokens of a row answered by a puzzle's solution (SuiteRow.answer_form)."""
TURN_SLOT = re.compile(r"\{\{\s*(\w+)\.(\w+)\s*\}\}")
"""A `{{ NAME.slot }}` of a user turn marked `fill`."""
PUSHES = ("other", "same")
"""What a pushing user turn pushes toward, relative to the answered turn before it (or an answer token)."""


class DecodeSettings(TypedDict, total=False):
    """The decode settings a suite may carry, each with its domain (the description says it in words).
    The compiler accepts exactly these in a spec and the runner exactly these in a row."""

    # pydantic's documented way to configure a TypedDict, which the typing spec does not allow for
    __pydantic_config__ = ConfigDict(extra="forbid", strict=True)  # type: ignore[misc]

    temperature: Annotated[float, Field(ge=0, description="a number >= 0")]
    max_tokens: Annotated[int, Field(ge=1, description="a whole number >= 1")]
    top_p: Annotated[float, Field(gt=0, le=1, description="a number in (0, 1]")]
    top_k: Annotated[int, Field(ge=1, description="a whole number >= 1")]
    seed: Annotated[int, Field(description="a whole number")]
    stop: Annotated[str | list[str], Field(description="a text or a list of texts")]
    reasoning_effort: Annotated[str, Field(description="a text (e.g. low, medium, high)")]
    presence_penalty: Annotated[float, Field(ge=-2, le=2, description="a number from -2 to 2")]
    frequency_penalty: Annotated[float, Field(ge=-2, le=2, description="a number from -2 to 2")]
    # how the runner reads the answer (never sent): the reply's last line is this prefix and a token
    answer_line: Annotated[str, Field(pattern=r"\S", description='a non-empty text such as "Answer:"')]


@cache
def _domains() -> dict[str, Any]:
    """Each decode setting's annotation with its Field (evaluated once: each evaluation builds them all)."""
    return get_type_hints(DecodeSettings, include_extras=True)


DECODE_KEYS: tuple[str, ...] = tuple(_domains())


@cache
def _decode() -> TypeAdapter[DecodeSettings]:
    """The validator of decode settings, built on first use: building it loads pydantic's validation machinery,
    which a spec that sets no decode value need not pay for."""
    return TypeAdapter(DecodeSettings)


def decode_domain(name: str) -> str:
    """The allowed values of decode setting `name`, in words."""
    description: str = _domains()[name].__metadata__[0].description
    return description


def valid_decode_value(name: str, value: Any) -> bool:
    """True when `value` is in decode setting `name`'s domain."""
    try:
        _decode().validate_python({name: value})
    except ValidationError:
        return False
    return True



EMBEDDED_JUDGE = "local/gemma-3-270m"  # the one in-process model a suite may name: never a file
_EMBEDDED = EMBEDDED_JUDGE.replace(".", r"\.")
JUDGE_MODEL = re.compile(
    rf"^(?!.*\.\.)(?:{_EMBEDDED}|(?!local/)[A-Za-z0-9][A-Za-z0-9_.:@+-]*(?:/[A-Za-z0-9_.:@+-]+)*)$"
)
"""A litellm model name: no scheme, query, space or `..`; `local/` (in-process, from a file) only for the
embedded model."""
