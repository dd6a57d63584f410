"""The compiled-suite contract: one suite.jsonl row and manifest.json, as pydantic models.

These models are the single source of schema.json; see docs/suite-format.md.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

CellValue = str | int | None
EXTRACTION_SLOT = "{{ answer }}"  # where an extraction prompt takes the decision it reads (Extraction.prompt)


class Message(BaseModel):
    """One chat turn. An assistant turn with `generate: true` is produced by the model at run time."""

    model_config = ConfigDict(extra="forbid")

    role: Literal["system", "user", "assistant"] = Field(description="Who speaks this turn.")
    content: str | None = Field(default=None, description="The turn's text; absent for generate turns.")
    generate: bool | None = Field(
        default=None, description="True when the model must write this assistant turn at run time."
    )
    decode: dict[str, Any] | None = Field(
        default=None, description="Generate turns: decode settings over the row's (e.g. a longer max_tokens)."
    )
    share: str | None = Field(
        default=None,
        description="Generate turns: rows whose turn has the same share key get one generated text per "
        "sample, made once per run (e.g. the acknowledgment both arms of a unit see).",
    )


class Judge(BaseModel):
    """A judge model that classifies the reply to a follow-up turn into one of `labels`."""

    model_config = ConfigDict(extra="forbid")

    model: str | None = Field(default=None, description="litellm model string; the run's judge if absent.")
    labels: list[str] = Field(description="The label set the judge must choose from.")
    prompt: str = Field(description="The judge prompt; {{ reply }} marks where the reply goes.")
    reply: Literal["json"] | None = Field(
        default=None,
        description='How the judge answers: absent, the bare label; json, an object {"label": ..., "reason": ...}.',
    )


class FollowUp(BaseModel):
    """A turn appended after the model's answer (e.g. the seed-000 second-turn probe)."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(description="The follow-up's name in the spec.")
    content: str = Field(description="The user turn sent after the model's answer.")
    decode: dict[str, Any] | None = Field(
        default=None, description="Decode settings of this turn over the row's, e.g. a longer max_tokens."
    )
    judge: Judge | None = Field(default=None, description="How the reply is classified, if at all.")


class Extraction(BaseModel):
    """A second, single-turn call that reads the option out of a free-form decision (seed 004's authors)."""

    model_config = ConfigDict(extra="forbid")

    prompt: str = Field(description="The extraction prompt; {{ answer }}, once, marks where the decision goes.")
    parse: Literal["option_number"] = Field(
        description='How its reply is read: option_number, the first "Option N" / "option N" (N the displayed '
        "number, its answer token)."
    )


class SuiteRow(BaseModel):
    """One unique prompt of a compiled suite (one line of suite.jsonl)."""

    model_config = ConfigDict(extra="forbid")

    id: str = Field(description="First 16 hex digits of sha256 of the row's canonical JSON without `id`.")
    messages: list[Message] = Field(description="The full chat sent to the model, in order.")
    samples: int = Field(ge=1, description="How many independent answers to draw for this prompt.")
    cell: dict[str, CellValue] = Field(description="Design coordinates the scorer groups by.")
    answers: dict[str, str] = Field(description="Valid answer tokens mapped to analysis outcomes.")
    decode: dict[str, Any] = Field(description="Generation settings: temperature, max_tokens, ...")
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


class Balance(BaseModel):
    """A balance guarantee the compiler proved: every cell over `keys` has `trials_per_cell` trials."""

    model_config = ConfigDict(extra="forbid")

    keys: list[str] = Field(description="The cell coordinates that define one balanced cell.")
    cells: int = Field(description="How many such cells exist.")
    trials_per_cell: int = Field(description="Trials in each of them.")
    shared: dict[str, str] = Field(
        default_factory=dict,
        description="Conditions whose rows serve every value of a key, e.g. baseline -> influence.",
    )


class Manifest(BaseModel):
    """What was compiled, from what, by what, with hashes (manifest.json)."""

    model_config = ConfigDict(extra="forbid")

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
