"""docs/architecture.md and pyproject.toml cannot drift from the tree: the doc lists every module (a module
added or removed without the doc changing fails here) and pyproject lists every package the wheel must carry."""

from __future__ import annotations

import tomllib

from tests.import_graph import MODULES_BEGIN, listed_modules, module_list, modules
from tests.support import ROOT

REGENERATE = "regenerate it with `.venv/bin/python -m tests.import_graph`"


def test_the_doc_lists_every_module_and_no_other() -> None:
    tree = {str(path.relative_to(ROOT)) for path in modules().values()}
    listed = listed_modules()
    assert not tree - listed, f"docs/architecture.md does not list {sorted(tree - listed)}: {REGENERATE}"
    assert not listed - tree, f"docs/architecture.md lists modules that are gone, {sorted(listed - tree)}: {REGENERATE}"


def test_the_check_reads_the_generated_block() -> None:
    """The list it compares is the generated one: one row per module, each a file of the tree."""
    generated = listed_modules(MODULES_BEGIN + module_list() + "<!-- end of the module list -->\n")
    assert generated == {str(path.relative_to(ROOT)) for path in modules().values()}
    assert "compiler/emit.py" in generated and "spec_audits/contract/writer.py" in generated


def test_pyproject_lists_every_package_of_the_tree() -> None:
    """setuptools installs only the packages it is given (package-dir maps the folders under spec_audits)."""
    listed = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]["packages"]
    tree = sorted(name for name, path in modules().items() if path.name == "__init__.py")
    assert sorted(listed) == tree
