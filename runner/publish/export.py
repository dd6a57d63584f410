"""A compiled suite in the formats other tools read: inspect_ai, promptfoo, Hugging Face datasets, CSV.

Each format carries every row once: the chat, the valid answers, the decode settings and the cell, so
results from any tool can be grouped by cell as `spec score` does. `samples` (answers to draw per
prompt) travels as data; inspect_ai's epochs or promptfoo's repeat are the tools' own way to draw them.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

from compiler.suite_model import SuiteRow
from runner.contract import SUITE_FILE, ContractError, Suite
from runner.publish.card import size_category

OPTIONAL = ("puzzle", "followups", "expect", "meta")


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


def to_inspect(suite: Suite, out: Path) -> None:
    """A JSONL file for inspect_ai's json_dataset(): input messages, the valid answers as target, and the
    cell with everything else in metadata."""
    lines = [_json({"id": row.id, "input": chat(suite, row, "inspect_ai"), "target": sorted(row.answers),
                    "metadata": _metadata(row)}) for row in suite.rows]
    out.write_text("\n".join(lines) + "\n", encoding="utf-8")


def to_promptfoo(suite: Suite, out: Path) -> None:
    """A promptfoo folder: promptfooconfig.yaml (the chat prompt, tests, a provider to replace), prompt.json
    (the row's messages) and tests.yaml (one test per row; the reply must contain a valid answer)."""
    out.mkdir(parents=True, exist_ok=True)
    tests = [{"description": row.id, "vars": {"messages": chat(suite, row, "promptfoo"), **row.cell},
              "assert": [{"type": "contains-any", "value": sorted(row.answers)}], "metadata": _metadata(row)}
             for row in suite.rows]
    config = {"description": suite.manifest.title or suite.manifest.suite, "prompts": ["file://prompt.json"],
              "providers": ["openai:gpt-4o-mini"], "tests": "file://tests.yaml"}
    (out / "prompt.json").write_text("{{ messages | dump }}\n", encoding="utf-8")
    (out / "tests.yaml").write_text(yaml.safe_dump(tests, sort_keys=True, allow_unicode=True), encoding="utf-8")
    (out / "promptfooconfig.yaml").write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")


def flat(row: SuiteRow) -> dict[str, Any]:
    """One row as flat columns: id, samples, cell_<key> per cell key; objects as their JSON text."""
    return {"id": row.id, "samples": row.samples, **{f"cell_{k}": v for k, v in sorted(row.cell.items())},
            "answers": _json(row.answers), "decode": _json(row.decode),
            **{name: _json(value) for name, value in _extras(row).items()}}


def to_hf(suite: Suite, out: Path) -> None:
    """A Hugging Face datasets folder: test.jsonl (messages as a list of role/content pairs, the rest as
    flat columns) and a README.md whose front matter declares it, for datasets.load_dataset(out)."""
    out.mkdir(parents=True, exist_ok=True)
    keys = sorted({key for row in suite.rows for key in flat(row)})
    lines = [_json({key: None for key in keys} | flat(row) | {"messages": chat(suite, row, "Hugging Face")})
             for row in suite.rows]  # every column in every row, so the column types are inferred alike
    (out / "test.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    card = ["---", f"pretty_name: {json.dumps(suite.manifest.title or suite.manifest.suite)}",
            "size_categories:", f"- {size_category(len(suite.rows))}", "configs:", "- config_name: default",
            "  data_files:", "  - split: test", "    path: test.jsonl", "---", "",
            f"# {suite.manifest.title or suite.manifest.suite}", "",
            f"Exported by `spec export --to hf` from suite `{suite.manifest.suite}` (manifest.json sha256 "
            f"{suite.manifest_sha256}). `spec bundle` publishes it with its sources and licence.", ""]
    (out / "README.md").write_text("\n".join(card), encoding="utf-8")


def to_csv(suite: Suite, out: Path) -> None:
    """One line per row: id, samples, a column per cell key, then answers, decode, messages (and puzzle,
    followups, expect, meta where present) as JSON text."""
    rows = [flat(row) | {"messages": _json([m.model_dump(exclude_none=True) for m in row.messages])}
            for row in suite.rows]
    columns = list(dict.fromkeys(key for row in rows for key in row))
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=columns, lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    out.write_text(buffer.getvalue(), encoding="utf-8")


EXPORTERS: dict[str, Callable[[Suite, Path], None]] = {
    "inspect": to_inspect, "promptfoo": to_promptfoo, "hf": to_hf, "csv": to_csv}
