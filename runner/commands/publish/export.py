"""A compiled suite in the formats other tools read: inspect_ai, promptfoo, Hugging Face datasets, CSV.

Each format carries every row once: the chat, the valid answers, the decode settings and the cell, so
results from any tool can be grouped by cell as `spec score` does. `samples` (answers to draw per
prompt) travels as data; inspect_ai's epochs or promptfoo's repeat are the tools' own way to draw them.
"""

from __future__ import annotations

import importlib
import json
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import click
import yaml

from spec_audits.contract.reader import SUITE_FILE, ContractError, Suite
from spec_audits.contract.suite_model import SuiteRow
from spec_audits.runner.commands.publish.card import cell_types, size_category
from spec_audits.runner.commands.publish.peer_files import inspect_task, promptfoo_assert, provider_config
from spec_audits.runner.files_out import write_csv_rows

OPTIONAL = ("puzzle", "followups", "expect", "meta", "unit")


def chat(suite: Suite, row: SuiteRow, tool: str) -> list[dict[str, str]]:
    """The row's messages as role/content pairs; a trailing turn the model writes is its answer, so it
    is left out; a turn the model writes mid-conversation cannot be fixed text and is refused."""
    messages = row.messages[:-1] if row.messages[-1].generate else row.messages
    for number, message in enumerate(messages, start=1):
        if message.generate:
            raise ContractError(suite.path / SUITE_FILE, f"row {row.id}: turn {number} is written by the model at "
                                f"run time, which {tool} datasets cannot hold", fix="run this suite with `spec run`")
    return [{"role": m.role, "content": m.content or ""} for m in messages]


def _json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


def _extras(row: SuiteRow) -> dict[str, Any]:
    return row.model_dump(mode="json", include=set(OPTIONAL), exclude_none=True)


def _metadata(row: SuiteRow) -> dict[str, Any]:
    return {"cell": row.cell, "answers": row.answers, "samples": row.samples, "decode": row.decode, **_extras(row)}


def uniform(suite: Suite, what: str, value: Callable[[SuiteRow], Any], tool: str) -> Any:
    """The one value every row has (its samples, its decode settings); a located error naming two rows that
    differ, since `tool` applies one to a whole run."""
    first = suite.rows[0]
    other = next((row for row in suite.rows if value(row) != value(first)), None)
    if other is not None:
        raise ContractError(suite.path / SUITE_FILE, f"rows {first.id} and {other.id} differ in {what} "
                            f"({value(first)!r}, {value(other)!r}), but {tool} takes one for every row",
                            fix="run this suite with `spec run`, or compile the rows of each setting as their own "
                            "suite")
    return value(first)


def _plain(suite: Suite, row: SuiteRow) -> SuiteRow:
    """`row`, refused where its answer is not read from the reply alone (an extraction call, follow-ups, a
    puzzle's solution): the peer tools make one call per sample."""
    extra = next((name for name in ("extract", "followups", "answer_form") if getattr(row, name) is not None), None)
    if extra is not None:
        raise ContractError(suite.path / SUITE_FILE, f"row {row.id} has `{extra}`: its answer needs more than the "
                            "reply to its chat, which the exported task does not ask",
                            fix="run this suite with `spec run`")
    return row


def to_inspect(suite: Suite, out: Path) -> None:
    """A JSONL dataset for inspect_ai's json_dataset() (input messages; cell, answers, samples and decode in
    metadata) and beside it the task file `inspect eval` runs as it is (runner/commands/publish/peer_files.py)."""
    epochs = uniform(suite, "samples", lambda row: row.samples, "inspect_ai's epochs")
    lines = [_json({"id": row.id, "input": chat(suite, _plain(suite, row), "inspect_ai"), "metadata": _metadata(row)})
             for row in suite.rows]
    out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    task = out.with_suffix(".py")
    task.write_text(inspect_task(suite.manifest.suite, suite.manifest_sha256, task.name, out.name, epochs),
                    encoding="utf-8")


def to_promptfoo(suite: Suite, out: Path, provider: str) -> None:
    """A promptfoo folder: promptfooconfig.yaml (the chat prompt, `provider` with the suite's decode settings,
    one repeat per sample), prompt.json (the row's messages), tests.yaml (one test per row) and
    assert_answer.py (passes when spec's parser reads a valid answer from the reply)."""
    decode = uniform(suite, "decode settings", lambda row: provider_config(row.decode), "a promptfoo provider")
    repeat = uniform(suite, "samples", lambda row: row.samples, "promptfoo's repeat")
    tests: list[dict[str, Any]] = [
        {"description": row.id, "vars": {"messages": chat(suite, _plain(suite, row), "promptfoo"), **row.cell,
                                         "spec_answers": row.answers, **_answer_line(row)},
         "assert": [{"type": "python", "value": "file://assert_answer.py"}], "metadata": _metadata(row)}
        for row in suite.rows]
    config = {"description": suite.manifest.title or suite.manifest.suite, "prompts": ["file://prompt.json"],
              "providers": [{"id": provider, "config": decode}], "tests": "file://tests.yaml",
              "evaluateOptions": {"repeat": repeat}}
    out.mkdir(parents=True, exist_ok=True)
    (out / "prompt.json").write_text("{{ messages | dump }}\n", encoding="utf-8")
    (out / "tests.yaml").write_text(yaml.safe_dump(tests, sort_keys=True, allow_unicode=True), encoding="utf-8")
    (out / "promptfooconfig.yaml").write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    (out / "assert_answer.py").write_text(promptfoo_assert(), encoding="utf-8")


def _answer_line(row: SuiteRow) -> dict[str, Any]:
    line = row.decode.get("answer_line")
    return {} if line is None else {"spec_answer_line": line}


def flat(row: SuiteRow) -> dict[str, Any]:
    """One row as flat columns: id, samples, cell_<key> per cell key; objects as their JSON text (the
    unit, a name, as it is)."""
    return {"id": row.id, "samples": row.samples, **{f"cell_{k}": v for k, v in sorted(row.cell.items())},
            "answers": _json(row.answers), "decode": _json(row.decode),
            **{name: value if isinstance(value, str) else _json(value) for name, value in _extras(row).items()}}


HF_DATA = "test/data-00000-of-00001.arrow"
"""The hf export's one data file, as Dataset.save_to_disk names it: load_from_disk reads it through
dataset_dict.json and test/state.json, load_dataset through the card's `configs`."""


def _datasets() -> ModuleType:
    try:
        datasets = importlib.import_module("datasets")
    except ImportError:
        raise click.ClickException("`spec export --to hf` writes the folder with the Hugging Face `datasets` "
                                   "library, which is not installed; install it with "
                                   "`pip install 'datasets>=3.0'`") from None
    return datasets


def _hf_features(datasets: ModuleType, rows: list[SuiteRow]) -> Any:
    """The columns and their types: a cell key is int64 when every value given is an integer, else text."""
    text, number = datasets.Value("string"), datasets.Value("int64")
    cells = {f"cell_{key}": number if kind == "sc:Integer" else text for key, kind in cell_types(rows).items()}
    extras = {name: text for name in OPTIONAL if any(getattr(row, name) is not None for row in rows)}
    return datasets.Features({"id": text, "samples": number, **cells, "answers": text, "decode": text, **extras,
                              "messages": [{"role": text, "content": text}]})


def _hf_columns(suite: Suite, features: Any) -> dict[str, list[Any]]:
    records = [flat(row) | {"messages": chat(suite, row, "Hugging Face")} for row in suite.rows]
    texts = {name for name, kind in features.items() if getattr(kind, "dtype", None) == "string"}
    return {name: [_as_text(record.get(name)) if name in texts else record.get(name) for record in records]
            for name in features}


def _as_text(value: Any) -> str | None:
    return None if value is None else str(value)


def _hf_card(suite: Suite) -> str:
    title = suite.manifest.title or suite.manifest.suite
    lines = ["---", f"pretty_name: {json.dumps(title)}", "size_categories:", f"- {size_category(len(suite.rows))}",
             "configs:", "- config_name: default", "  data_files:", "  - split: test", f"    path: {HF_DATA}",
             "---", "", f"# {title}", "",
             f"Exported by `spec export --to hf` from suite `{suite.manifest.suite}` (manifest.json sha256 "
             f"{suite.manifest_sha256}). Load it with `datasets.load_from_disk(FOLDER)` or "
             "`datasets.load_dataset(FOLDER)`; `spec bundle` publishes the suite with its sources and licence.", ""]
    return "\n".join(lines)


def to_hf(suite: Suite, out: Path) -> None:
    """A Hugging Face datasets folder as DatasetDict.save_to_disk writes it (one `test` split, one Arrow
    file), with a card whose front matter names that file, so both datasets.load_from_disk(out) and
    datasets.load_dataset(out) read it. The bytes are the same for the same suite: the Arrow file holds
    no time, and the fingerprint in test/state.json hashes the in-memory table and info (with no file times
    mixed in, as there are no cache files)."""
    datasets = _datasets()
    features = _hf_features(datasets, suite.rows)
    info = datasets.DatasetInfo(description=f"spec suite {suite.manifest.suite}",
                                citation=suite.manifest.citation or "", features=features)
    table = datasets.Dataset.from_dict(_hf_columns(suite, features), features=features, info=info)
    shown = not datasets.are_progress_bars_disabled()
    datasets.disable_progress_bars()
    try:
        datasets.DatasetDict({"test": table}).save_to_disk(str(out), num_shards={"test": 1})
    finally:
        if shown:
            datasets.enable_progress_bars()
    (out / "README.md").write_text(_hf_card(suite), encoding="utf-8")


def to_csv(suite: Suite, out: Path) -> None:
    """One line per row: id, samples, a column per cell key, then answers, decode, messages (and puzzle,
    followups, expect, meta where present) as JSON text."""
    rows = [flat(row) | {"messages": _json([m.model_dump(exclude_none=True) for m in row.messages])}
            for row in suite.rows]
    write_csv_rows(rows, out)


EXPORTERS: dict[str, Callable[[Suite, Path], None]] = {"inspect": to_inspect, "hf": to_hf, "csv": to_csv}
"""The formats written from the suite alone; promptfoo takes the provider too (to_promptfoo)."""
FORMATS = sorted([*EXPORTERS, "promptfoo"])
