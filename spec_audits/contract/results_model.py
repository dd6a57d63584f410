"""The results contract: one results.jsonl line and run.json, as pydantic models."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field


class ResultRow(BaseModel):
    """One answer of one (item, sample): appended and flushed to results.jsonl as it arrives."""

    model_config = ConfigDict(extra="forbid")

    item_id: str = Field(description="The suite row's id.")
    sample: int = Field(ge=0, description="0-based sample index within the row's `samples`.")
    model: str = Field(description="litellm model string that answered.")
    params: dict[str, Any] = Field(description="Decode settings actually sent.")
    response: str | None = Field(default=None, description="Raw text of the final answer turn.")
    answer: str | None = Field(default=None, description="Parsed answer token, null for an abstention.")
    extraction: str | None = Field(
        default=None, description="Rows with `extract`: the extraction call's raw reply, which `answer` is read from."
    )
    outcome: str | None = Field(default=None, description="The answer mapped to its analysis outcome.")
    logprobs: dict[str, float] | None = Field(
        default=None, description="logprob mode: probabilities over the valid answer tokens (sum to 1)."
    )
    error: str | None = Field(default=None, description="Null, or a short reason the item failed.")
    usage: dict[str, int] | None = Field(default=None, description="Token usage summed over the calls.")
    latency_s: float | None = Field(default=None, description="Wall time of the item's calls.")
    reasks: int = Field(default=0, description="Re-asks after an invalid first answer.")
    first_answer: str | None = Field(default=None, description="The parsed first answer, before re-asks.")
    turns: list[dict[str, Any]] | None = Field(
        default=None, description="Generated assistant turns and follow-up replies, in order."
    )
    followups: dict[str, Any] | None = Field(
        default=None,
        description="Follow-up name -> {response, label, judge_response}: the reply, the judge's label (null when "
        "its reply gives no valid one) and the judge's raw reply; a `reply json` judge adds its reason.",
    )
    solution: dict[str, dict[str, str]] | None = Field(
        default=None, description="Rows answered by a solution: the cells read from the reply, person -> attribute "
        "-> value (a cell stated ambiguously is left out).")
    turn_answers: dict[str, dict[str, Any]] | None = Field(
        default=None,
        description="Conversations: answered turn name -> {turn, response, answer, outcome}, in the order played; "
        "`answer` is null for an abstention.",
    )
    stopped: str | None = Field(
        default=None, description="Conversations: why the conversation stopped before its last turn (a later turn "
        "reads an answered turn that gave no valid answer); the later answers are then null.")
    recorded: dict[str, int | float | str | None] | None = Field(
        default=None, description="Rows that `read` fields of the reply: name -> the value, null where the reply "
        "gives none of the reader's kind and bounds.")
    cached: bool = Field(default=False, description="True when the item was answered and every call came from the "
                         "response cache; a failed item is never cached.")


class RunInfo(BaseModel):
    """run.json: what was run, how, and how far it got."""

    model_config = ConfigDict(extra="allow")

    suite_dir: str
    suite_manifest_sha256: str
    suite_sha256: str | None = Field(default=None, description="suite.jsonl's sha256 (absent in older runs).")
    model: str
    mode: str
    settings: dict[str, Any]
    started: str
    ended: str | None = None
    planned: int
    done: int
    failed: int
    usage: dict[str, Any] | None = Field(
        default=None, description="Tokens of every answer's calls (prompt_tokens, completion_tokens; response-cache "
        "hits included) and cost_usd, litellm's price of the calls not answered from the cache (null when litellm "
        "knows no price for the model; 0 for the embedded model).")
