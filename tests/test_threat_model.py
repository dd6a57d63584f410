"""docs/threat-model.md: every promise names a test, and every test it names exists."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MODEL = ROOT / "docs" / "threat-model.md"
ROW = re.compile(r"^\| (?P<promise>.+?) \| (?P<tests>[^|]+) \|$")


def _rows() -> list[tuple[int, str, str]]:
    rows = []
    for number, line in enumerate(MODEL.read_text(encoding="utf-8").splitlines(), 1):
        found = ROW.match(line.replace("\\|", "/"))
        if found and found["promise"] not in ("promise", "---") and not found["promise"].startswith("---"):
            rows.append((number, found["promise"], found["tests"].strip()))
    return rows


def _defined_tests(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return {node.name for node in ast.walk(tree) if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)}


def _param_exists(path: Path, param: str) -> bool:
    """A parametrised test's id is written in its file, or names a fixture file (tests/fixtures/*/ID.*)."""
    return param in path.read_text(encoding="utf-8") or any((ROOT / "tests" / "fixtures").rglob(f"{param}.*"))


def test_the_threat_model_lists_promises() -> None:
    assert len(_rows()) > 50


def test_every_promise_names_a_test_that_exists() -> None:
    missing = []
    for number, _promise, tests in _rows():
        for reference in re.split(r",\s*|<br>|\s+and\s+", tests):
            file, _, name = reference.strip().strip("`").partition("::")
            path = ROOT / file
            base, _, param = name.split("::")[-1].partition("[")
            if not name or not path.is_file() or base not in _defined_tests(path) or \
                    (param and not _param_exists(path, param.rstrip("]"))):
                missing.append(f"docs/threat-model.md:{number}: {reference.strip()}")
    assert missing == []
