'''The program files `spec export` writes beside a dataset so that the peer tool runs it as it is: an inspect_ai
task file and a promptfoo assertion. Both read a reply with spec's own parser (the answer the runner would
record, null when none), never "is one of the valid answers in the text" (which an echo of the prompt passes).
'''

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

SENT_AS = {"temperature": "temperature", "max_tokens": "max_tokens", "top_p": "top_p", "top_k": "top_k",
           "seed": "seed", "stop": "stop_seqs", "reasoning_effort": "reasoning_effort",
           "presence_penalty": "presence_penalty", "frequency_penalty": "frequency_penalty"}
"""A suite's decode setting -> inspect_ai's GenerateConfig field (answer_line is never sent)."""

INSPECT_TASK = '''"""inspect_ai task for the spec suite {suite} (written by `spec export --to inspect`;
manifest.json sha256 {sha}). Run it as it is:

    inspect eval {task_file} --model PROVIDER/MODEL

Each sample is one suite row: its chat, sent with the row's own decode settings, and its cell in metadata;
{epochs} epoch(s), one per answer the suite draws. The scorer records the answer spec's parser reads from the
reply (Score.answer, null when none; its value is 1 when the reply gave a valid answer), not a correctness:
bring the log back with `spec import inspect-log LOG --suite SUITE --out RUN` and score it with `spec score RUN`.
Needs spec-audits installed beside inspect_ai (its answer parser).
"""

from pathlib import Path

from inspect_ai import Task, task
from inspect_ai.dataset import json_dataset
from inspect_ai.scorer import Score, Target, mean, scorer
from inspect_ai.solver import Generate, TaskState, solver

from spec_audits.runner.conversation import read_answer

DATASET = Path(__file__).with_name({dataset})
SENT_AS = {sent_as}


@solver
def suite_decode():
    """generate() with the row's decode settings."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        decode = state.metadata["decode"]
        config = {{SENT_AS[key]: [value] if key == "stop" and isinstance(value, str) else value
                  for key, value in decode.items() if key in SENT_AS}}
        return await generate(state, **config)

    return solve


@scorer(metrics=[mean()])
def parsed_answer():
    """The answer token the reply gives, as `spec run` reads it, and its outcome."""

    async def score(state: TaskState, target: Target) -> Score:
        answers = state.metadata["answers"]
        reply = state.output.completion
        answer = read_answer(reply, tuple(answers), state.metadata["decode"].get("answer_line"))
        return Score(value=0 if answer is None else 1, answer=answer, explanation=reply,
                     metadata={{"outcome": None if answer is None else answers[answer]}})

    return score


@task
def {function}():
    return Task(dataset=json_dataset(str(DATASET)), solver=suite_decode(), scorer=parsed_answer(), epochs={epochs},
                name={name})
'''


def inspect_task(suite: str, sha: str, task_file: str, dataset: str, epochs: int) -> str:
    """The task file's text for the dataset file `dataset` beside it. The suite's name comes from its manifest, a
    stranger's data, and the file names from the command line: each is written as a JSON string (a valid Python
    literal with every quote and line break escaped), so none can end the docstring or a literal and become code."""
    return INSPECT_TASK.format(suite=json.dumps(suite), sha=sha, task_file=json.dumps(task_file),
                               dataset=json.dumps(dataset),
                               sent_as=json.dumps(SENT_AS), epochs=epochs, function="spec_suite",
                               name=json.dumps(suite))


PROMPTFOO_ASSERT = '''"""promptfoo assertion written by `spec export --to promptfoo`: the reply passes when spec's
parser reads a valid answer from it (the answer `spec run` would record); the reason names that answer and its
outcome. An echo of the prompt, which holds every option, gives no single answer and fails. Needs spec-audits
installed."""

from spec_audits.runner.conversation import read_answer


def get_assert(output, context):
    answers = context["vars"]["spec_answers"]
    answer = read_answer(output, tuple(answers), context["vars"].get("spec_answer_line"))
    if answer is None:
        reason = "no valid answer (spec reads none of " + ", ".join(answers) + ")"
        return {{"pass": False, "score": 0, "reason": reason}}
    return {{"pass": True, "score": 1, "reason": "answer " + answer + " = " + answers[answer]}}
'''


def promptfoo_assert() -> str:
    return PROMPTFOO_ASSERT.format()


def provider_config(decode: Mapping[str, Any]) -> dict[str, Any]:
    """promptfoo's OpenAI-style provider config for a suite's decode settings (answer_line is never sent)."""
    return {key: value for key, value in decode.items() if key != "answer_line"}
