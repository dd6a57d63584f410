"""`spec import inspect-log` and `spec import promptfoo`: what inspect_ai or promptfoo answered to a suite that
`spec export` wrote, back as a run folder that `spec score` reads like a native run.

These formats are the peer tools' own and hold any suite, so their importers are family-blind (PEER_FORMATS,
listed beside the families' own by `spec import`). Each answer is matched to its suite row by id and by its chat, byte
for byte, and to a sample by its epoch (inspect) or its repeat (promptfoo); its answer is read from the reply by
the parser `spec run` uses, whatever the peer tool's scorer said. An answer that does not match is refused
naming the file and the sample or result.
"""

from __future__ import annotations

import importlib
import json
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from spec_audits.base.safe_files import read_text_capped
from spec_audits.contract.reader import Suite, read_suite
from spec_audits.contract.results_model import ResultRow
from spec_audits.contract.suite_model import SuiteRow
from spec_audits.runner.conversation import read_answer
from spec_audits.runner.imported import ImportedRun, ImportInputError, write_runs


def _sent(row: SuiteRow) -> list[dict[str, str]]:
    """The chat `spec export` wrote for `row` (a trailing turn the model writes is the answer, left out)."""
    messages = row.messages[:-1] if row.messages[-1].generate else row.messages
    return [{"role": m.role, "content": m.content or ""} for m in messages]


def _params(row: SuiteRow) -> dict[str, Any]:
    """The decode settings the exports send (answer_line is how the answer is read, never sent)."""
    return {key: value for key, value in row.decode.items() if key != "answer_line"}


def _answer(row: SuiteRow, reply: str | None) -> dict[str, Any]:
    """What `spec run` records of a reply to `row`: the text, the parsed answer and its outcome."""
    line = row.decode.get("answer_line")
    answer = read_answer(reply, tuple(row.answers), None if line is None else str(line))
    return {"response": reply, "answer": answer, "outcome": None if answer is None else row.answers[answer]}


def _row(suite: Suite, rows: dict[str, SuiteRow], where: Path, what: str, item: Any, sent: Any) -> SuiteRow:
    """The suite row `item` names, whose chat is `sent`; a located error otherwise."""
    row = rows.get(str(item))
    if row is None:
        raise ImportInputError(where, f"{what}: id {item!r} is no row of the suite {suite.path}: was the file made "
                               "from `spec export` of this suite?")
    if sent != _sent(row):
        raise ImportInputError(where, f"{what}: the chat sent is not row {row.id}'s as the suite holds it (edited "
                               "after the export?)")
    return row


def _sample(row: SuiteRow, index: int, where: Path, what: str) -> int:
    if index >= row.samples:
        raise ImportInputError(where, f"{what}: answer {index + 1} of row {row.id}, which draws {row.samples}")
    return index


def _inspect_log(path: Path) -> Any:
    try:
        log = importlib.import_module("inspect_ai.log")
    except ImportError:
        raise click.ClickException("`spec import inspect-log` reads logs with inspect_ai, which is not installed; "
                                   "install it with `pip install 'inspect_ai>=0.3.285'`") from None
    try:
        return log.read_eval_log(str(path))
    except Exception as err:  # inspect_ai's reader raises whatever its parser meets
        raise ImportInputError(path, f"not an inspect_ai eval log ({type(err).__name__}: {err})") from None


def _inspect_rows(path: Path, suite: Suite, rows: dict[str, SuiteRow]) -> ImportedRun:
    log = _inspect_log(path)
    run = ImportedRun(model=str(log.eval.model), settings={"imported_from": "inspect_ai", "log": path.name})
    taken: set[tuple[str, int]] = set()
    for sample in log.samples or []:
        what = f"sample {sample.id} epoch {sample.epoch}"
        sent = [{"role": m.role, "content": m.text} for m in sample.input] if not isinstance(sample.input, str) \
            else [{"role": "user", "content": sample.input}]
        row = _row(suite, rows, path, what, sample.id, sent)
        number = _sample(row, int(sample.epoch) - 1, path, what)
        if (row.id, number) in taken:  # a run folder holds one row per (item, sample): scoring refuses a repeat
            raise ImportInputError(path, f"{what}: the log answers it twice; an import takes each epoch once")
        taken.add((row.id, number))
        usage = sample.output.usage
        error = None if sample.error is None else str(sample.error.message)
        reply = None if error is not None else sample.output.completion
        run.rows.append(ResultRow(
            item_id=row.id, sample=number, model=run.model,
            params=_params(row), error=error, **(_answer(row, reply) if error is None else {}),
            usage=None if usage is None else {"prompt_tokens": usage.input_tokens,
                                              "completion_tokens": usage.output_tokens}))
    return run


def _promptfoo_results(path: Path) -> list[dict[str, Any]]:
    try:
        found = json.loads(read_text_capped(path))["results"]["results"]
    except (ValueError, KeyError, TypeError) as err:
        raise ImportInputError(path, f"not a promptfoo results file (`promptfoo eval -o FILE.json`): {err}") from None
    if not isinstance(found, list) or not all(isinstance(result, dict) for result in found):
        raise ImportInputError(path, "results.results is not a list of results")
    return found


def _promptfoo_rows(path: Path, suite: Suite, rows: dict[str, SuiteRow]) -> list[ImportedRun]:
    runs: dict[str, ImportedRun] = {}
    seen: Counter[tuple[str, str]] = Counter()
    for number, result in enumerate(_promptfoo_results(path)):
        what = f"results[{number}]"
        test, response = result.get("testCase") or {}, result.get("response") or {}
        provider = str((result.get("provider") or {}).get("id"))
        row = _row(suite, rows, path, what, test.get("description"), (test.get("vars") or {}).get("messages"))
        run = runs.setdefault(provider, ImportedRun(model=provider, settings={"imported_from": "promptfoo",
                                                                              "results": path.name}))
        sample = _sample(row, seen[(provider, row.id)], path, what)
        seen[(provider, row.id)] += 1
        error = result.get("error") if response.get("output") is None else None
        tokens = response.get("tokenUsage") or {}
        run.rows.append(ResultRow(
            item_id=row.id, sample=sample, model=provider, params=_params(row),
            error=None if error is None else str(error),
            **(_answer(row, str(response["output"])) if error is None else {}),
            usage={"prompt_tokens": int(tokens.get("prompt", 0)),
                   "completion_tokens": int(tokens.get("completion", 0))}))
    return list(runs.values())


def _convert(files: list[Path], out: Path, options: dict[str, Any], read: Any) -> list[str]:
    suite = read_suite(options["suite"])
    rows = {row.id: row for row in suite.rows}
    runs: list[ImportedRun] = [run for path in files for run in read(path, suite, rows)]
    made = write_runs(out, suite, runs)
    return [f"imported {len(run.rows)} answers of {run.model} -> {folder}" for run, folder in zip(runs, made,
                                                                                                  strict=True)] + \
        [f"next: spec score {out}"]


def import_inspect(files: list[Path], out: Path, options: dict[str, Any]) -> list[str]:
    return _convert(files, out, options, lambda path, suite, rows: [_inspect_rows(path, suite, rows)])


def import_promptfoo(files: list[Path], out: Path, options: dict[str, Any]) -> list[str]:
    return _convert(files, out, options, _promptfoo_rows)


PEER_FORMATS: tuple[tuple[str, str, Callable[[list[Path], Path, dict[str, Any]], list[str]]], ...] = (
    ("inspect-log", "an inspect_ai eval log (.eval or .json) of a suite `spec export --to inspect` wrote",
     import_inspect),
    ("promptfoo", "a promptfoo results file (promptfoo eval -o FILE.json) of a suite `spec export --to "
     "promptfoo` wrote", import_promptfoo),
)
