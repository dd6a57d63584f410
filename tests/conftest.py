"""Shared fixtures: small compiled suites written with the suite models, and an isolated response cache."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from compiler.emit import suite_row, write_suite_folder
from compiler.suite_model import SuiteRow


def forced_choice_rows(n: int, samples: int, **extra: Any) -> list[SuiteRow]:
    """`n` A/B rows over 4 cells (2 influences x 2 orders); `extra` fields are added to every row."""
    rows = []
    for i in range(n):
        order = "AB" if i % 2 == 0 else "BA"
        first, second = ("tea", "coffee") if order == "AB" else ("coffee", "tea")
        body: dict[str, Any] = {
            "messages": [
                {"role": "system", "content": "Answer with a single letter."},
                {
                    "role": "user",
                    "content": f"Prompt {i}. Which do you prefer? A: {first} B: {second}. "
                    "Respond with only 'A' or 'B'.",
                },
            ],
            "samples": samples,
            "cell": {"influence": ["none", "survey"][(i // 2) % 2], "order": order, "condition": "baseline"},
            "answers": {"A": first, "B": second},
            "decode": {"temperature": 1.0, "max_tokens": 2},
            **extra,
        }
        rows.append(suite_row(body))
    return sorted(rows, key=lambda r: r.id)


def write_suite(folder: Path, rows: list[SuiteRow], mode: str = "sample") -> Path:
    """Write suite.jsonl, schema.json and manifest.json for `rows` into `folder`."""
    write_suite_folder(
        folder, rows, suite=folder.name, spec_file="tests.spec", spec_sha256="0" * 64,
        compiler_version="test", schema_version="1", seed=0, mode=mode, cells={"influence": 2, "order": 2},
    )
    return folder


@pytest.fixture
def make_suite(tmp_path: Path) -> Callable[..., Path]:
    """make_suite(n=20, samples=2, mode="sample", name="suite", **row_fields) -> suite folder."""

    def make(n: int = 20, samples: int = 2, mode: str = "sample", name: str = "suite", **extra: Any) -> Path:
        return write_suite(tmp_path / name, forced_choice_rows(n, samples, **extra), mode)

    return make


@pytest.fixture(autouse=True)
def response_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every test gets its own response cache, so that no test answers from another's calls."""
    path = tmp_path / "cache" / "responses.sqlite"
    monkeypatch.setenv("SPEC_RESPONSE_CACHE", str(path))
    return path
