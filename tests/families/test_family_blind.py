"""The family-blind stages never import a family module; only the dispatch modules reach the registry."""

from __future__ import annotations

from tests.import_graph import graph

DISPATCH = {
    "spec_audits.compiler.build", "spec_audits.compiler.designs", "spec_audits.runner.score_cli",
    "spec_audits.runner.report.build", "spec_audits.cli", "spec_audits.runner.generate_cli",
    "spec_audits.runner.import_cli"}
"""The only shared modules that may reach families/ (through the registry and the interface)."""
FAMILY_BLIND = (
    "spec_audits.compiler.parse", "spec_audits.compiler.tree_to_ast", "spec_audits.compiler.nodes",
    "spec_audits.compiler.load", "spec_audits.compiler.check", "spec_audits.compiler.emit",
    "spec_audits.contract.suite_model", "spec_audits.runner.plan", "spec_audits.runner.execute",
    "spec_audits.runner.cache", "spec_audits.runner.merge", "spec_audits.runner.call", "spec_audits.contract.reader",
    "spec_audits.runner.results_io", "spec_audits.runner.run_cli", "spec_audits.runner.run_config",
    "spec_audits.runner.shared_turns", "spec_audits.compiler.data_source", "spec_audits.compiler.data_parse",
    "spec_audits.compiler.ast_designs", "spec_audits.compiler.ast_values", "spec_audits.runner.publish.sources",
    "spec_audits.runner.publish.card", "spec_audits.runner.publish.archive", "spec_audits.runner.publish.members",
    "spec_audits.runner.publish.sums", "spec_audits.runner.publish.provenance", "spec_audits.runner.imported")
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
