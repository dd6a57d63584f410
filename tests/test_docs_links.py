"""README.md and docs/ point only at what exists: every relative link and every backticked repository path is
a file or folder of the checkout, every `#anchor` and every cited section ("Section name" after a doc, or
"... below/above") is a heading of that doc. Help texts in the code that cite a doc's section are checked too."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.support import ROOT

DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
CODE = sorted(p for folder in ("spec_audits", "runner", "compiler", "families") for p in (ROOT / folder).rglob("*.py"))
TOP = {p.name for p in ROOT.iterdir()} - {".git", ".venv", "runs"}
FENCE = re.compile(r"^(```|~~~)")
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
TICKED = re.compile(r"`([^`\s]+)`")
URL = re.compile(r"[a-z]+://\S+")
# a path written without backticks: folders and a file name with one of the repository's extensions
BARE = re.compile(r"(?<![\w/.`-])((?:[\w.-]+/)+[\w.-]+\.(?:md|py|spec|lark|json|jsonl|csv|toml))\b")
OUTPUTS = {"runs", "generated"}  # what commands write (generated/ commits only manifests and schemas)
HYPOTHETICAL = {"compiler/families/", "runner/families/"}  # architecture.md: the layout that was not chosen
CITED = re.compile(r"`?((?:docs/)?[\w-]+\.md)`?\)?,?\s+(?:section\s+)?\"([^\"\n]+)\"")
HERE = re.compile(r"\"([^\"\n]+)\"\s+(?:below|above)")
PLACEHOLDER = re.compile(r"[<>*{}$|~]|\.\.\.|(?:^|/)[A-Z][A-Z_]*(?:/|$)")


def _prose(path: Path) -> list[tuple[int, str]]:
    """(line number, line) of a Markdown file outside fenced code blocks."""
    lines, fenced = [], False
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if FENCE.match(line.strip()):
            fenced = not fenced
        elif not fenced:
            lines.append((number, line))
    return lines


def headings(path: Path) -> set[str]:
    return {line.lstrip("#").strip().replace("`", "") for _, line in _prose(path) if re.match(r"#{1,6} ", line)}


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.lower()).replace(" ", "-")


def _doc(name: str, source: Path) -> Path:
    """A cited doc: relative to the citing file, else to docs/ (docs cite each other by bare name), else the root."""
    for base in (source.parent, ROOT / "docs", ROOT):
        if (base / name).is_file():
            return base / name
    return source.parent / name


def _repo_path(text: str) -> str | None:
    """`text` as a repository path to check, or None when it is not one (a command, a placeholder, an output,
    a file name such as LICENSE.md that a bundle holds)."""
    text = text.split("::")[0].rstrip(".,:;")
    first, *rest = text.split("/")
    if PLACEHOLDER.search(text) or text in HYPOTHETICAL or first in OUTPUTS and rest[-1:] == ["suite.jsonl"]:
        return None
    if not rest:
        return text if text.endswith(".md") and not text[:-3].isupper() else None
    return text if first in TOP | {"shared", "methods"} or BARE.fullmatch(text) else None


def _exists(name: str, source: Path) -> bool:
    return any((base / name).exists() for base in (source.parent, ROOT, ROOT / "docs")) or name.startswith("runs/")


def _problems(path: Path) -> list[str]:
    where = path.relative_to(ROOT)
    problems = []
    for number, line in _prose(path):
        for target in LINK.findall(line):
            if re.match(r"[a-z]+:", target):
                continue
            file, _, anchor = target.partition("#")
            doc = (path.parent / file) if file else path
            if not doc.exists():
                problems.append(f"{where}:{number}: link to {file}, which does not exist")
            elif anchor and doc.suffix == ".md" and anchor not in {slug(h) for h in headings(doc)}:
                problems.append(f"{where}:{number}: no heading in {file or where} has the anchor #{anchor}")
        bare = BARE.findall(TICKED.sub("", URL.sub("", LINK.sub("", line))))
        for text in [*TICKED.findall(line), *bare]:
            name = _repo_path(text)
            if name and not _exists(name, path):
                problems.append(f"{where}:{number}: {name} does not exist")
    text = path.read_text(encoding="utf-8")
    problems += [f"{where}: {p}" for p in _sections(" ".join(text.split()), path)]
    return problems


def _sections(text: str, source: Path) -> list[str]:
    cited = [(_doc(name, source), section) for name, section in CITED.findall(text)]
    if source.suffix == ".md":
        cited += [(source, section) for section in HERE.findall(text)]
    return [f"{doc.relative_to(ROOT)} has no section \"{section}\"" for doc, section in cited
            if doc.is_file() and not any(h == section or h.startswith(f"{section} (") for h in headings(doc))]


@pytest.mark.parametrize("path", DOCS, ids=lambda p: p.name)
def test_every_reference_in_the_docs_exists(path: Path) -> None:
    assert _problems(path) == []


CITED_TEST = re.compile(r"(tests/[\w/]+\.py)::(\w+)(?:\[([^\]\s]+)\])?")


def _missing_tests(text: str) -> list[str]:
    """Each `tests/FILE.py::test[case]` in `text` that names no test of that file (or a case it has not: a
    parameter written in the file or a fixture file of that name)."""
    missing = []
    for file, name, case in sorted(set(CITED_TEST.findall(text))):
        path = ROOT / file
        source = path.read_text(encoding="utf-8") if path.is_file() else ""
        if not re.search(rf"^(?:async )?def {name}\(", source, re.MULTILINE):
            missing.append(f"{file}::{name}")
        elif case and case not in source and not any((ROOT / "tests").rglob(f"{case}.*")):
            missing.append(f"{file}::{name}[{case}]")
    return missing


@pytest.mark.parametrize("path", DOCS, ids=lambda p: p.name)
def test_every_test_a_doc_cites_exists(path: Path) -> None:
    """docs/threat-model.md names the test of each promise: a renamed or removed test must not leave it
    pointing at nothing."""
    assert _missing_tests(path.read_text(encoding="utf-8")) == []


def test_the_test_checker_finds_a_missing_test() -> None:
    assert _missing_tests("tests/test_docs_links.py::test_every_test_a_doc_cites_exists[README.md]") == []
    case = "no_such" + "_case"  # written apart, so that this file does not hold it
    assert _missing_tests("tests/test_docs_links.py::test_no_such_test and "
                          f"tests/test_docs_links.py::test_every_test_a_doc_cites_exists[{case}]") == [
        f"tests/test_docs_links.py::test_every_test_a_doc_cites_exists[{case}]",
        "tests/test_docs_links.py::test_no_such_test"]


def test_every_section_the_code_cites_exists() -> None:
    problems = [f"{path.relative_to(ROOT)}: {p}" for path in CODE
                for p in _sections(" ".join(path.read_text(encoding="utf-8").split()), path)]
    assert problems == []


def test_the_checker_finds_what_is_missing(tmp_path: Path) -> None:
    doc = ROOT / "docs" / "running.md"
    assert "Exit status" in headings(doc) and slug("Cache, resume, retries") == "cache-resume-retries"
    assert _sections('see `docs/running.md`, "No such section"', ROOT / "README.md") == [
        'docs/running.md has no section "No such section"']
    assert _repo_path("methods/local-model.md") == "methods/local-model.md"
    assert _repo_path("runs/triage-local") is None and _repo_path("RUN_DIR/results.jsonl") is None


def test_the_readme_says_how_to_call_spec_before_it_first_calls_it_bare() -> None:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    bare = re.search(r"^spec ", text, re.MULTILINE)
    assert bare is not None and text.index("source .venv/bin/activate") < bare.start()
    assert text.index("`.venv/bin/spec`") < bare.start()
