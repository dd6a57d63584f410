"""docs/threat-model.md holds each promise to a test: every test a row names exists (its file, its function and,
for a parametrized case, the fixture or parameter it names), so a renamed or removed test cannot leave a promise
unchecked."""

from __future__ import annotations

import re

from tests.support import ROOT

THREAT_MODEL = ROOT / "docs" / "threat-model.md"
NODE = re.compile(r"(tests/[\w/]+\.py)::(\w+)(?:\[([^\]]+)\])?")


def _missing(path: str, name: str, case: str | None) -> str | None:
    source = ROOT / path
    if not source.is_file():
        return "no such file"
    text = source.read_text(encoding="utf-8")
    if not re.search(rf"^\s*(?:async\s+)?def {name}\(", text, re.MULTILINE):
        return "no such test"
    fixtures = {p.stem for p in (ROOT / "tests" / "fixtures").rglob("*") if p.is_file()}
    if case is not None and case not in fixtures and case not in text:
        return f"no case {case!r}"
    return None


def test_every_test_the_threat_model_names_exists() -> None:
    rows = [line for line in THREAT_MODEL.read_text(encoding="utf-8").splitlines() if line.startswith("| ")]
    named = [match for line in rows for match in NODE.findall(line)]
    assert len(named) > 50  # the table is read, not skipped
    problems = [f"{path}::{name}{f'[{case}]' if case else ''}: {why}" for path, name, case in named
                if (why := _missing(path, name, case or None))]
    assert problems == []
