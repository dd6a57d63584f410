"""The compiled-suite contract: one suite.jsonl row and manifest.json, as pydantic models.

These models are the single source of schema.json; see docs/suite-format.md. The schema is closed: a
row carries data (prompts, answers, cells) and the decode settings below, never configuration of the
call (an endpoint, a key, headers, a mock reply): those come only from the command line and the
environment of whoever runs the suite (docs/threat-model.md).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any, Literal, cast

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    PlainSerializer,
    ValidatorFunctionWrapHandler,
    WrapValidator,
    model_validator,
)
from pydantic_core import PydanticCustomError
from typing_extensions import TypedDict  # pydantic validates only this one's TypedDicts on Python < 3.12

from spec_audits.contract.suite_terms import (
    EMBEDDED_JUDGE,
    JUDGE_MODEL,
    SETTING_DOMAINS,
    SOLUTION_OUTCOMES,
    DecodeSettings,
    setting_types,
)

CellValue = str | int | None


def _as_written(value: Any, handler: ValidatorFunctionWrapHandler) -> Any:
    """Validate against DecodeSettings but keep the settings exactly as written (key order, 0 not 0.0),
    so that what is sent, cached and recorded is what the suite says."""
    handler(value)
    return value


def _unchanged(value: dict[str, Any]) -> dict[str, Any]:
    return value


def _checked_settings() -> Any:
    """DecodeSettings as pydantic validates it: each setting's type with its domain (suite_terms.SETTING_DOMAINS)
    as a Field, no other key, no coercion, patterns searched with Python's `re` as the compiler's check does."""
    fields = {name: Annotated[kind, Field(description=SETTING_DOMAINS[name].words, **SETTING_DOMAINS[name].bounds())]
              for name, kind in setting_types().items()}
    settings: Any = cast(Any, TypedDict)("DecodeSettings", fields, total=False)  # made, not declared: no mypy form
    settings.__doc__ = DecodeSettings.__doc__  # schema.json's description of it
    settings.__pydantic_config__ = ConfigDict(extra="forbid", strict=True, regex_engine="python-re")
    return settings


if TYPE_CHECKING:
    Decode = DecodeSettings
else:
    Decode = Annotated[_checked_settings(), WrapValidator(_as_written), PlainSerializer(_unchanged)]


def _model_name(value: str) -> str:
    if not JUDGE_MODEL.fullmatch(value):
        raise PydanticCustomError(
            "judge_model",
            "'{value}' is not a model name: a suite names a judge as provider/model (e.g. openai/gpt-4o-mini), "
            f"never a URL, a path or a model file ({EMBEDDED_JUDGE} aside)",
            {"value": value},
        )
    return value


ModelName = Annotated[str, AfterValidator(_model_name), Field(json_schema_extra={"pattern": JUDGE_MODEL.pattern})]
EXTRACTION_SLOT = "{{ answer }}"  # where an extraction prompt takes the decision it reads (Extraction.prompt)


TurnName = Annotated[str, Field(pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")]


class TurnAnswer(BaseModel):
    """A generated assistant turn inside a conversation whose reply is parsed into an answer, like the
    row's own (the reply to the last message) is: its own valid tokens, outcomes and option texts."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

    name: TurnName = Field(description="The answered turn's name: results key its answer by it, and later user "
                           "turns read it as {{ NAME.answer }}, {{ NAME.option }}, {{ NAME.other }}.")
    answers: dict[str, str] = Field(description="Valid answer tokens mapped to analysis outcomes.")
    options: dict[str, str] | None = Field(
        default=None, description="Answer token -> the option's text, for {{ NAME.option }} and {{ NAME.other }}.")
    meanings: dict[str, str] | None = Field(
        default=None, description="Answer token -> what the displayed option means (a meaning id or its text), "
        "where the outcome does not tell options apart; absent: each token means its outcome (MEANINGS).")


    @model_validator(mode="after")
    def _meanings_cover_tokens(self) -> TurnAnswer:
        _check_meanings(self.answers, self.meanings)
        return self


MEANINGS = """What an answer means, for statistics that compare answers across turns, orders or rows (flips,
McNemar, position bias): `meanings[token]` where the row records meanings, else the token's outcome
`answers[token]`, never the slot the option was shown in. A family records meanings where its outcomes do
not tell its options apart and it knows what each displayed slot shows."""


def meaning(answers: dict[str, str], meanings: dict[str, str] | None, token: str | None) -> str | None:
    """What answer `token` means (MEANINGS); None for no answer or a token that is not one."""
    if token is None or token not in answers:
        return None
    return meanings[token] if meanings is not None else answers[token]


def _check_meanings(answers: dict[str, str], meanings: dict[str, str] | None) -> None:
    if meanings is None:
        return
    if set(meanings) != set(answers):
        raise ValueError("`meanings` gives every answer token exactly one meaning, as `answers` lists them")
    if len(set(meanings.values())) != len(meanings):
        raise ValueError("`meanings` gives each answer token its own meaning: two tokens share one")


class Message(BaseModel):
    """One chat turn. An assistant turn with `generate: true` is produced by the model at run time."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

    role: Literal["system", "user", "assistant"] = Field(description="Who speaks this turn.")
    content: str | None = Field(default=None, description="The turn's text; absent for generate turns.")
    generate: bool | None = Field(
        default=None, description="True when the model must write this assistant turn at run time."
    )
    decode: Decode | None = Field(
        default=None, description="Generate turns: decode settings over the row's (e.g. a longer max_tokens)."
    )
    share: str | None = Field(
        default=None,
        description="Generate turns: rows whose turn has the same share key get one generated text per "
        "sample, made once per run (e.g. the acknowledgment both arms of a unit see).",
    )
    model: ModelName | None = Field(
        default=None, description="Generate turns: the model that writes this turn, when not the one audited.")
    answer: TurnAnswer | None = Field(
        default=None, description="Generate turns: the reply is an answer, parsed like the row's own.")
    fill: bool | None = Field(
        default=None, description="User turns: {{ NAME.slot }} (TURN_SLOTS) filled in from earlier answered turns.")
    push: str | None = Field(
        default=None, description="User turns: the option this turn pushes toward: other (the one the answered "
        "turn before it did not choose), same, or an answer token; flip statistics read it.")


class Judge(BaseModel):
    """A judge model that classifies the reply to a follow-up turn into one of `labels`."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

    model: ModelName | None = Field(
        default=None, description="litellm model name; --judge-model overrides it; the run's judge if absent."
    )
    labels: list[str] = Field(description="The label set the judge must choose from.")
    prompt: str = Field(description="The judge prompt; {{ reply }} marks where the reply goes.")
    reply: Literal["json"] | None = Field(
        default=None,
        description='How the judge answers: absent, the bare label; json, an object {"label": ..., "reason": ...}.',
    )


class FollowUp(BaseModel):
    """A turn appended after the model's answer (e.g. the seed-000 second-turn probe)."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

    name: str = Field(description="The follow-up's name in the spec.")
    content: str = Field(description="The user turn sent after the model's answer.")
    decode: Decode | None = Field(
        default=None, description="Decode settings of this turn over the row's, e.g. a longer max_tokens."
    )
    judge: Judge | None = Field(default=None, description="How the reply is classified, if at all.")


class Extraction(BaseModel):
    """A second, single-turn call that reads the option out of a free-form decision (seed 004's authors)."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

    prompt: str = Field(description="The extraction prompt; {{ answer }}, once, marks where the decision goes.")
    parse: Literal["option_number"] = Field(
        description='How its reply is read: option_number, the first "Option N" / "option N" (N the displayed '
        "number, its answer token)."
    )


class Reader(BaseModel):
    """A field of the reply a family records besides the answer (a stated confidence, a count): the value that
    follows the last `after` label in the reply (case ignored), read without a pattern from the suite, so a
    stranger's suite cannot make the runner's reading slow. A value that is missing, not of its kind or outside
    [low, high] is recorded as null, never guessed."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

    name: str = Field(pattern=r"^[a-z][a-z0-9_]{0,39}$", description="The field's name in results.jsonl `recorded`.")
    after: str = Field(min_length=1, max_length=80, pattern=r"\S",
                       description='The label the value follows, e.g. "Confidence:".')
    kind: Literal["int", "number", "word"] = Field(
        description="int: a whole number; number: any number; word: the next word (letters, digits, _ and -).")
    low: float | None = Field(default=None, description="Numbers: the smallest value recorded.")
    high: float | None = Field(default=None, description="Numbers: the largest value recorded.")

    @model_validator(mode="after")
    def _bounds(self) -> Reader:
        if self.kind == "word" and (self.low is not None or self.high is not None):
            raise ValueError("a word has no bounds: low and high are for int and number readers")
        if self.low is not None and self.high is not None and self.low > self.high:
            raise ValueError(f"low {self.low} is above high {self.high}")
        return self


class SuiteRow(BaseModel):
    """One unique prompt of a compiled suite (one line of suite.jsonl)."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

    id: str = Field(description="First 16 hex digits of sha256 of the row's canonical JSON without `id`.")
    messages: list[Message] = Field(description="The full chat sent to the model, in order.")
    samples: int = Field(ge=1, description="How many independent answers to draw for this prompt.")
    cell: dict[str, CellValue] = Field(description="Design coordinates the scorer groups by.")
    answers: dict[str, str] = Field(description="Valid answer tokens mapped to analysis outcomes.")
    decode: Decode = Field(description="Generation settings: temperature, max_tokens, ...")
    puzzle: dict[str, Any] | None = Field(default=None, description="Structured puzzle, if any.")
    followups: list[FollowUp] | None = Field(default=None, description="Turns sent after the answer.")
    extract: Extraction | None = Field(
        default=None, description="When present, the answer is read by this extraction call, not from the reply."
    )
    expect: dict[str, Any] | None = Field(default=None, description="Correct auxiliary answers.")
    meta: dict[str, Any] | None = Field(default=None, description="Provenance: template, source row, ...")
    unit: str | None = Field(
        default=None, description="Rows of one unit are planned together: --limit counts units, never splits one."
    )
    read: list[Reader] | None = Field(
        default=None, description="Fields of the reply recorded besides the answer (results.jsonl `recorded`), "
        "each declared by the design's family: a name, the label it follows and its kind.")
    meanings: dict[str, str] | None = Field(
        default=None, description="Answer token -> what the displayed option means (a meaning id or its text), "
        "where the outcome does not tell options apart; absent: each token means its outcome (MEANINGS).")
    answer_form: Literal["solution"] | None = Field(
        default=None, description="solution: the reply is read as an assignment of the row's `puzzle` and its "
        "answer is `solved` (every cell equal to expect.solution) or `unsolved`; `answers` maps those two.")

    @model_validator(mode="after")
    def _distinct_readers(self) -> SuiteRow:
        names = [reader.name for reader in self.read or ()]
        if len(set(names)) != len(names):
            raise ValueError(f"two readers of one name: {', '.join(sorted(names))}")
        return self

    @model_validator(mode="after")
    def _solution_answers(self) -> SuiteRow:
        _check_meanings(self.answers, self.meanings)
        if self.answer_form == "solution":
            if self.puzzle is None or not isinstance((self.expect or {}).get("solution"), dict):
                raise ValueError("a row answered by a solution needs a `puzzle` and `expect.solution`")
            if set(self.answers) != set(SOLUTION_OUTCOMES):
                raise ValueError(f"a row answered by a solution has the answers {', '.join(SOLUTION_OUTCOMES)}")
        return self


class Balance(BaseModel):
    """A balance guarantee the compiler proved: every cell over `keys` has `trials_per_cell` trials."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

    keys: list[str] = Field(description="The cell coordinates that define one balanced cell.")
    cells: int = Field(description="How many such cells exist.")
    trials_per_cell: int = Field(description="Trials in each of them.")
    shared: dict[str, str] = Field(
        default_factory=dict,
        description="Conditions whose rows serve every value of a key, e.g. baseline -> influence.",
    )


class Manifest(BaseModel):
    """What was compiled, from what, by what, with hashes (manifest.json)."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

    suite: str
    title: str | None = None
    description: str | None = None
    citation: str | None = None
    spec_file: str
    spec_sha256: str
    compiler_version: str
    schema_version: str
    seed: int
    mode: Literal["sample", "logprob"] = "sample"
    analysis: dict[str, Any] | None = None
    rows: int
    trials: int
    cells: dict[str, int] = Field(description="Distinct values per design axis.")
    balance: list[Balance] = Field(default_factory=list)
    files: dict[str, str] = Field(description="File name -> sha256, for every file but manifest.json.")
