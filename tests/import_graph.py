"""The import graph of spec's own modules, built with `ast` from the source (nothing is imported).

Every import counts: module level, inside a function, under `if TYPE_CHECKING:`; a relative import is
resolved against its package. `from X import y` is an arrow to the module X.y when y is a module, else
to X. Module names are the installed ones (the folder compiler/ is spec_audits.compiler: pyproject's
package-dir). Imports of anything that is not one of spec's modules (the standard library, third-party
packages) are left out.
"""

from __future__ import annotations

import ast
import re
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


ARCHITECTURE = ROOT / "docs" / "architecture.md"
LAYERS_BEGIN = "<!-- layers: tests/test_import_graph.py reads this table -->\n"
LAYERS_END = "<!-- end of layers -->\n"


def layer_table(text: str | None = None) -> list[tuple[str, tuple[str, ...]]]:
    """docs/architecture.md's layer table, lowest first: (layer name, the module names it lists)."""
    text = ARCHITECTURE.read_text(encoding="utf-8") if text is None else text
    table = text.split(LAYERS_BEGIN, 1)[1].split(LAYERS_END, 1)[0]
    layers = []
    for row in table.splitlines()[2:]:
        cells = [cell.strip() for cell in row.strip().strip("|").split("|")]
        layers.append((cells[0], tuple(name.strip().strip("`") for name in cells[1].split(","))))
    return layers


def layer_of(module: str, layers: list[tuple[str, tuple[str, ...]]]) -> int | None:
    """The index of `module`'s layer: the one listing the longest name that is the module or a package
    holding it. None when no layer lists it."""
    best: tuple[int, int] | None = None
    for index, (_, names) in enumerate(layers):
        for name in names:
            if (module == name or module.startswith(f"{name}.")) and (best is None or len(name) > best[1]):
                best = (index, len(name))
    return None if best is None else best[0]


def upward(edges: dict[str, frozenset[str]], layers: list[tuple[str, tuple[str, ...]]]) -> list[str]:
    """Every import from a lower layer to a higher one, as 'a (layer) -> b (layer)'."""
    found = []
    for module, targets in sorted(edges.items()):
        here = layer_of(module, layers)
        for target in sorted(targets):
            there = layer_of(target, layers)
            if here is not None and there is not None and there > here:
                found.append(f"{module} ({layers[here][0]}) -> {target} ({layers[there][0]})")
    return found


def cycles(edges: dict[str, frozenset[str]]) -> list[list[str]]:
    """The groups of modules that import each other in a circle (strongly connected components of more than
    one module, or a module that imports itself), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(edges):
        if root in index:
            continue
        work = [(root, iter(sorted(edges.get(root, ()))))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                group = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.append(member)
                    if member == node:
                        break
                if len(group) > 1 or node in edges.get(node, ()):
                    found.append(sorted(group))
    return found


MODULES_BEGIN = ("<!-- every module, generated by `.venv/bin/python -m tests.import_graph` from the tree and each "
                 "module's docstring; tests/test_architecture.py fails when a module is missing or gone -->\n")
MODULES_END = "<!-- end of the module list -->\n"


def _role(path: Path) -> str:
    """The first sentence of a module's docstring, on one line."""
    doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""
    paragraph = " ".join(doc.split("\n\n")[0].split())
    ends = [m.start() for m in re.finditer(r"\. (?=[A-Z`(])", paragraph) if paragraph[: m.start()].count("`") % 2 == 0]
    sentence = paragraph[: ends[0]] if ends else paragraph.rstrip(".")
    if len(sentence) > 120:  # a long first sentence loses its asides
        sentence = re.sub(r" \([^()`]*\)", "", sentence)
    return sentence.replace("|", "\\|") + "."


def module_list() -> str:
    """The generated "Every module" block: one table per package, one row per module, by file."""
    found = modules()
    packages = sorted(m for m, p in found.items() if p.name == "__init__.py")
    blocks = []
    for package in packages:
        folder = found[package].parent.relative_to(ROOT)
        members = [package, *(m for m, p in sorted(found.items())
                              if m.rpartition(".")[0] == package and p.name != "__init__.py")]
        rows = [f"| `{found[m].relative_to(ROOT)}` | {_role(found[m])} |" for m in members]
        blocks.append(f"**`{package}`** (`{folder}/`)\n\n| module | what it does |\n|---|---|\n" + "\n".join(rows))
    return "\n\n".join(blocks) + "\n"


def listed_modules(text: str | None = None) -> set[str]:
    """The module files docs/architecture.md's generated block lists."""
    text = ARCHITECTURE.read_text(encoding="utf-8") if text is None else text
    block = text.split(MODULES_BEGIN, 1)[1].split(MODULES_END, 1)[0]
    return set(re.findall(r"^\| `([^`]+\.py)` \|", block, re.M))


def write_module_list() -> None:
    """Rewrite docs/architecture.md's module list from the tree."""
    text = ARCHITECTURE.read_text(encoding="utf-8")
    head, rest = text.split(MODULES_BEGIN, 1)
    _, tail = rest.split(MODULES_END, 1)
    ARCHITECTURE.write_text(head + MODULES_BEGIN + "\n" + module_list() + "\n" + MODULES_END + tail, encoding="utf-8")


if __name__ == "__main__":
    write_module_list()
