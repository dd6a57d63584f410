"""The suite contract's names and domains: the template slots the runner fills in, the decode settings a row
may carry and the judge model names a suite may hold.

spec_audits/contract/suite_model.py builds the row and manifest models on these; the compiler checks a spec
against them without pydantic (a `spec check` never needs those models, nor pydantic's validation machinery:
importing it cost check about 40 ms of CPU).
"""

from __future__ import annotations

import re
from functools import cache
from typing import Any, TypedDict, get_args, get_origin, get_type_hints

from spec_audits.base.records import Record

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

    temperature: float
    max_tokens: int
    top_p: float
    top_k: int
    seed: int
    stop: str | list[str]
    reasoning_effort: str
    presence_penalty: float
    frequency_penalty: float
    answer_line: str  # how the runner reads the answer (never sent): the reply's last line is this prefix and a token


class SettingDomain(Record):
    """A decode setting's domain besides its type (DecodeSettings): its bounds, a pattern its text must contain
    (Python's `re.search`) and the whole domain in words. The one source of both checks of a value: the
    compiler's (valid_decode_value, without pydantic) and the row model's (suite_model.py makes a pydantic
    Field of it); tests/compiler/test_decode_domains.py holds them to the same verdicts."""

    words: str
    ge: float | None = None
    gt: float | None = None
    le: float | None = None
    pattern: str | None = None

    def bounds(self) -> dict[str, Any]:
        """The constraints it sets, by pydantic's Field names."""
        limits = {"ge": self.ge, "gt": self.gt, "le": self.le, "pattern": self.pattern}
        return {name: limit for name, limit in limits.items() if limit is not None}


SETTING_DOMAINS: dict[str, SettingDomain] = {
    "temperature": SettingDomain("a number >= 0", ge=0),
    "max_tokens": SettingDomain("a whole number >= 1", ge=1),
    "top_p": SettingDomain("a number in (0, 1]", gt=0, le=1),
    "top_k": SettingDomain("a whole number >= 1", ge=1),
    "seed": SettingDomain("a whole number"),
    "stop": SettingDomain("a text or a list of texts"),
    "reasoning_effort": SettingDomain("a text (e.g. low, medium, high)"),
    "presence_penalty": SettingDomain("a number from -2 to 2", ge=-2, le=2),
    "frequency_penalty": SettingDomain("a number from -2 to 2", ge=-2, le=2),
    "answer_line": SettingDomain('a non-empty text such as "Answer:"', pattern=r"\S"),
}
DECODE_KEYS: tuple[str, ...] = tuple(DecodeSettings.__annotations__)


@cache
def setting_types() -> dict[str, Any]:
    """Each decode setting's type, as DecodeSettings declares it (evaluated once, on first use)."""
    return get_type_hints(DecodeSettings)


def decode_domain(name: str) -> str:
    """The allowed values of decode setting `name`, in words."""
    return SETTING_DOMAINS[name].words


def valid_decode_value(name: str, value: Any) -> bool:
    """True when `value` is in decode setting `name`'s domain, as the row model's strict validation judges it
    (suite_model.py): of the setting's type (a bool is no number, a float no whole number, a tuple no list),
    a number finite as a float where its bounds exclude infinity, within the bounds, holding the pattern."""
    domain, typed = SETTING_DOMAINS[name], _typed(setting_types()[name], value)
    if typed is None:
        return False
    if isinstance(typed, int | float):
        return ((domain.ge is None or typed >= domain.ge) and (domain.gt is None or typed > domain.gt)
                and (domain.le is None or typed <= domain.le))
    return domain.pattern is None or re.search(domain.pattern, typed) is not None


def _typed(kind: Any, value: Any) -> Any:
    """`value` as pydantic's strict mode takes it for type `kind` (an int for a float as a float), or None
    when it does not."""
    if isinstance(value, bool) or value is None:
        return None
    if kind is float and isinstance(value, int | float):
        try:
            return float(value)
        except OverflowError:  # a whole number too large for a float
            return None
    if kind is int or kind is str:
        return value if isinstance(value, kind) else None
    if get_origin(kind) is list:
        item = get_args(kind)[0]
        return value if isinstance(value, list) and all(_typed(item, each) is not None for each in value) else None
    return next((value for option in get_args(kind) if _typed(option, value) is not None), None)


EMBEDDED_JUDGE = "local/gemma-3-270m"  # the one in-process model a suite may name: never a file
_EMBEDDED = EMBEDDED_JUDGE.replace(".", r"\.")
JUDGE_MODEL = re.compile(
    rf"^(?!.*\.\.)(?:{_EMBEDDED}|(?!local/)[A-Za-z0-9][A-Za-z0-9_.:@+-]*(?:/[A-Za-z0-9_.:@+-]+)*)$"
)
"""A litellm model name: no scheme, query, space or `..`; `local/` (in-process, from a file) only for the
embedded model."""
