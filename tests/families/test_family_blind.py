"""The family-blind stages never import a family module; only the dispatch modules reach the registry."""

from __future__ import annotations

import ast
from pathlib import Path

from tests.support import ROOT

PACKAGES = ("compiler", "runner")
DISPATCH = {"compiler.build", "compiler.designs", "runner.score_cli", "runner.report.build", "runner.cli",
            "runner.generate_cli", "runner.import_cli"}
"""The only shared modules that may reach families/ (through the registry and the interface)."""
FAMILY_BLIND = ("compiler.parse", "compiler.tree_to_ast", "compiler.nodes", "compiler.load", "compiler.check",
                "compiler.emit", "compiler.suite_model", "runner.plan", "runner.execute", "runner.cache",
                "runner.merge", "runner.call", "runner.contract", "runner.results_io", "runner.run_cli",
                "runner.run_config", "runner.shared_turns", "compiler.data_source", "compiler.data_parse",
                "compiler.ast_designs", "compiler.ast_values",
                "runner.publish.sources", "runner.publish.card", "runner.publish.archive", "runner.publish.members",
                "runner.publish.sums", "runner.publish.provenance",
                "runner.imported")


def _module(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path) -> set[str]:
    """Every module a file imports (a `from X import y` counts as X and X.y)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
    return found


GRAPH = {_module(p): _imports(p) for package in (*PACKAGES, "families") for p in (ROOT / package).rglob("*.py")}


def _reachable(start: str) -> set[str]:
    seen, todo = set(), [start]
    while todo:
        module = todo.pop()
        if module in seen or module not in GRAPH:
            continue
        seen.add(module)
        todo.extend(GRAPH[module])
    return seen


def test_family_blind_stages_reach_no_family_module() -> None:
    assert "families.registry" in _reachable("compiler.build")  # the walk does follow imports
    for stage in FAMILY_BLIND:
        assert stage in GRAPH, stage
        assert not {m for m in _reachable(stage) if m.startswith("families")}, stage


def test_only_the_dispatch_modules_import_families_and_never_a_family_folder() -> None:
    for module, imports in GRAPH.items():
        if module.startswith("families"):
            continue
        reached = {m for m in imports if m == "families" or m.startswith("families.")}
        assert not reached or module in DISPATCH, (module, reached)
        assert reached <= {"families", "families.registry", "families.interface", "families.interface.DesignContext",
                           "families.interface.Family", "families.interface.Form",
                           "families.interface.Importer"}, (module, reached)


def test_no_family_imports_another() -> None:
    for module, imports in GRAPH.items():
        parts = module.split(".")
        if parts[0] != "families" or len(parts) < 2 or parts[1] in ("interface", "registry"):
            continue
        own = f"families.{parts[1]}"
        foreign = {m for m in imports if m.startswith("families.")
                   and m != own and not m.startswith((f"{own}.", "families.interface"))}
        assert not foreign, (module, foreign)
