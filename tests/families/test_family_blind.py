"""The family-blind stages never import a family module; only the dispatch modules reach the registry."""

from __future__ import annotations

from tests.import_graph import graph

DISPATCH = {f"spec_audits.{name}" for name in (
    "compiler.build", "compiler.designs", "runner.score_cli", "runner.report.build", "runner.cli",
    "runner.generate_cli", "runner.import_cli")}
"""The only shared modules that may reach families/ (through the registry and the interface)."""
FAMILY_BLIND = tuple(f"spec_audits.{name}" for name in (
    "compiler.parse", "compiler.tree_to_ast", "compiler.nodes", "compiler.load", "compiler.check", "compiler.emit",
    "contract.suite_model", "runner.plan", "runner.execute", "runner.cache", "runner.merge", "runner.call",
    "contract.reader", "runner.results_io", "runner.run_cli", "runner.run_config", "runner.shared_turns",
    "compiler.data_source", "compiler.data_parse", "compiler.ast_designs", "compiler.ast_values",
    "runner.publish.sources", "runner.publish.card", "runner.publish.archive", "runner.publish.members",
    "runner.publish.sums", "runner.publish.provenance", "runner.imported"))
FAMILIES = "spec_audits.families"
GRAPH = graph()


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
    assert f"{FAMILIES}.registry" in _reachable("spec_audits.compiler.build")  # the walk does follow imports
    for stage in FAMILY_BLIND:
        assert stage in GRAPH, stage
        assert not {m for m in _reachable(stage) if m.startswith(FAMILIES)}, stage


def test_only_the_dispatch_modules_import_families_and_never_a_family_folder() -> None:
    for module, imports in GRAPH.items():
        if module.startswith(FAMILIES):
            continue
        reached = {m for m in imports if m.startswith(FAMILIES)}
        assert not reached or module in DISPATCH, (module, reached)
        assert reached <= {FAMILIES, f"{FAMILIES}.registry", f"{FAMILIES}.interface"}, (module, reached)


def test_no_family_imports_another() -> None:
    for module, imports in GRAPH.items():
        parts = module.removeprefix(f"{FAMILIES}.").split(".")
        if not module.startswith(f"{FAMILIES}.") or parts[0] in ("interface", "registry"):
            continue
        own = f"{FAMILIES}.{parts[0]}"
        foreign = {m for m in imports if m.startswith(f"{FAMILIES}.")
                   and m != own and not m.startswith((f"{own}.", f"{FAMILIES}.interface"))}
        assert not foreign, (module, foreign)
