"""The import graph of spec's own modules, built with `ast` from the source (nothing is imported).

Every import counts: module level, inside a function, under `if TYPE_CHECKING:`; a relative import is
resolved against its package. `from X import y` is an arrow to the module X.y when y is a module, else
to X. Module names are the installed ones (the folder compiler/ is spec_audits.compiler: pyproject's
package-dir). Imports of anything that is not one of spec's modules (the standard library, third-party
packages) are left out.
"""

from __future__ import annotations

import ast
import tomllib
from functools import cache
from pathlib import Path

from tests.support import ROOT

PACKAGE = "spec_audits"


@cache
def package_dirs() -> dict[str, str]:
    """Installed package name -> its folder, relative to the repository (pyproject's package-dir)."""
    setuptools = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]
    return dict(setuptools["package-dir"])


@cache
def modules() -> dict[str, Path]:
    """Every module of the distribution, by its installed dotted name."""
    found: dict[str, Path] = {}
    for package, folder in package_dirs().items():
        for path in (ROOT / folder).rglob("*.py"):
            parts = path.relative_to(ROOT / folder).with_suffix("").parts
            if "__pycache__" in parts:
                continue
            found[".".join([package, *(parts[:-1] if parts[-1] == "__init__" else parts)])] = path
    return found


def _target(name: str) -> str | None:
    """The module `name` refers to: itself, or the longest module that holds it (X.y where y is a class)."""
    known = modules()
    while name:
        if name in known:
            return name
        name = name.rpartition(".")[0]
    return None


def imports_of(module: str) -> set[str]:
    """The spec modules `module` imports, wherever in the file the import is written."""
    path = modules()[module]
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*parent, base] if base else parent)
            names = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules() else base for alias in node.names]
        else:
            continue
        found.update(t for name in names if (t := _target(name)) is not None and t != module)
    return found


@cache
def graph() -> dict[str, frozenset[str]]:
    """module -> the spec modules it imports."""
    return {module: frozenset(imports_of(module)) for module in modules()}
