"""The layers of docs/architecture.md hold: no import goes from a lower layer to a higher one, no modules
import each other in a circle, the shared stages never reach into a family's folder and no family into
another's. The graph is every import written in spec's source (module level, inside functions, under
TYPE_CHECKING), read with `ast` (tests/import_graph.py)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from tests.import_graph import PACKAGE, cycles, graph, layer_of, layer_table, modules, upward
from tests.support import ROOT

FAMILIES = f"{PACKAGE}.families"
SDK = f"{PACKAGE}.sdk"
SHARED = (f"{SDK}.interface", f"{PACKAGE}.dispatch.registry", SDK)
"""What shared code may use of the families, from the dispatch layer only: the interface, the registry (and the
public API, which re-exports the interface)."""


def test_every_module_is_in_a_layer() -> None:
    layers = layer_table()
    unplaced = [m for m in sorted(modules()) if m != PACKAGE and layer_of(m, layers) is None]
    assert not unplaced, f"add these to the layer table in docs/architecture.md: {unplaced}"
    listed = [name for _, names in layers for name in names]
    assert not [name for name in listed if name not in modules()], "the layer table names a package that is gone"


def test_every_layer_is_made_of_packages_whose_folders_name_it() -> None:
    """A layer lists folders, never a module picked out of one: a module's folder tells its layer."""
    packages = {name for name, path in modules().items() if path.name == "__init__.py"}
    listed = [name for _, names in layer_table() for name in names]
    assert f"{PACKAGE}.runner.services" in listed and f"{PACKAGE}.runner.services.cache" not in packages
    assert [name for name in listed if name not in packages] == [], "list packages (folders) in the layer table"


def test_no_import_goes_from_a_lower_layer_to_a_higher_one() -> None:
    assert upward(graph(), layer_table()) == []


def test_no_modules_import_each_other_in_a_circle() -> None:
    assert cycles(graph()) == []


def test_the_checks_find_what_they_look_for() -> None:
    """The graph sees imports inside functions, and the two checks report an upward import and a circle."""
    assert f"{PACKAGE}.local.model" in graph()[f"{PACKAGE}.runner.call"]  # imported inside ModelClient.prepare
    assert f"{PACKAGE}.dispatch.registry" in graph()[f"{PACKAGE}.compiler.dispatch.designs"]
    layers = [("low", ("a",)), ("high", ("b",))]
    edges = {"a.x": frozenset({"b"}), "b": frozenset({"a.y"}), "a.y": frozenset({"a.z"}), "a.z": frozenset({"a.y"})}
    assert upward(edges, layers) == ["a.x (low) -> b (high)"]
    assert cycles(edges) == [["a.y", "a.z"]]


def test_the_root_package_imports_nothing() -> None:
    """Every module of spec imports spec_audits first: it must stay free (`spec --help` is timed)."""
    tree = ast.parse(modules()[PACKAGE].read_text(encoding="utf-8"))
    assert not [node for node in ast.walk(tree) if isinstance(node, ast.Import | ast.ImportFrom)]


def test_shared_code_reaches_families_only_from_the_dispatch_layer_through_the_interface_and_registry() -> None:
    """... and the public API (spec_audits.sdk), in the interface's own layer, re-exports the interface."""
    layers = layer_table()
    allowed = {[name for name, _ in layers].index(layer) for layer in ("dispatch", "family interface")}
    for module, targets in graph().items():
        if module.startswith((f"{FAMILIES}.", f"{PACKAGE}.examples.")):
            continue
        family = {t for t in targets if t.startswith(f"{FAMILIES}.")}
        assert not family, f"{module} imports a family's own module: {sorted(family)}"
        reached = {t for t in targets if t.startswith(SHARED)}
        assert not reached or layer_of(module, layers) in allowed, f"{module} is not in the dispatch layer"


def test_no_family_imports_another() -> None:
    for module, targets in graph().items():
        if not module.startswith(f"{FAMILIES}."):
            continue
        own = ".".join(module.split(".")[:3])
        foreign = {t for t in targets if t.startswith(f"{FAMILIES}.") and not t.startswith(own)}
        assert not foreign, f"{module} imports another family: {sorted(foreign)}"


def test_builtin_families_import_only_the_sdk_and_their_own_folder() -> None:
    """A built-in family is written as an outside one would be: spec_audits.sdk, and its own modules."""
    for module, targets in graph().items():
        if not module.startswith(f"{FAMILIES}."):
            continue
        own = ".".join(module.split(".")[:3])
        other = {t for t in targets if t.startswith(PACKAGE) and not t.startswith(own)}
        assert other <= {SDK, PACKAGE}, f"{module} imports spec's internals: {sorted(other)}"


def test_the_shipped_example_families_import_only_the_sdk() -> None:
    """The worked examples (spec_audits/examples/) use the public API alone, as an outside family would."""
    examples = {m: t for m, t in graph().items() if m.startswith(f"{PACKAGE}.examples.")}
    assert examples, "spec_audits/examples/ holds the worked example of docs/families.md"
    for module, targets in examples.items():
        assert {t for t in targets if t.startswith(PACKAGE)} <= {SDK, PACKAGE}, module


def _third_party(module: str) -> set[str]:
    """The top-level names of everything `module` imports that is not spec itself, wherever in the file."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(modules()[module].read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            found.add(node.module.split(".")[0])
    return found - {PACKAGE}


def test_no_family_or_example_imports_the_parser_library() -> None:
    """A clause's shape is handed spec's Leaf (compiler/leaf.py), never lark's Token: a family, built in or
    shipped as an example, writes its clauses without the parser library (issue 33 item 1)."""
    written = [m for m in modules() if m.startswith((f"{FAMILIES}.", f"{PACKAGE}.examples."))
               and not m.startswith(SHARED)]
    assert f"{FAMILIES}.influence.clauses" in written and f"{PACKAGE}.examples.calibration" in written
    assert [m for m in sorted(written) if "lark" in _third_party(m)] == []
    assert "lark" in _third_party(f"{PACKAGE}.compiler.ast_values")  # the one place tokens become leaves


OLD_NAMES = re.compile(r"(?:^|\s|;|\")(?:from|import) (?:compiler|runner|families)\b|"
                       r"^(?:compiler|runner|families)(?:\.[A-Za-z_]\w*)+(?::\w+)?$")
PYTHON_FILES = sorted(p for folder in ("spec_audits", "compiler", "runner", "families", "tests", "benchmarks", ".ci")
                      for p in (ROOT / folder).rglob("*.py") if "__pycache__" not in p.parts)


@pytest.mark.parametrize("path", PYTHON_FILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_nothing_names_a_folder_as_a_top_level_package(path: Path) -> None:
    """`compiler.x` imports in a test would still work (the repository is on sys.path) but load a second
    copy of the module beside spec_audits.compiler.x: a monkeypatch of it would change nothing."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found += [a.name for a in node.names if a.name.split(".")[0] in ("compiler", "runner", "families")]
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            found += [node.module] if node.module.split(".")[0] in ("compiler", "runner", "families") else []
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and OLD_NAMES.search(node.value):
            found.append(node.value)
    assert not found, f"name these spec_audits.compiler.x, spec_audits.runner.x, spec_audits.families.x: {found}"
