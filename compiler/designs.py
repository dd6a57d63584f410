"""Stages 3 and 4 per design: pick the design's family by its declared analysis, check the clauses the
family takes, then run the family's checks and its preparation for expansion.

Each design counts its own errors, stage by stage (clauses, family checks, preparation): a mistake in one
design never stops another design's checks, and each stage of a design runs whenever its own earlier
stages passed.
"""

from __future__ import annotations

from compiler import nodes as n
from compiler.check import check_repeated_clauses
from compiler.errors import ErrorCollector, did_you_mean
from compiler.family import CompiledDesign
from families import registry
from families.interface import DesignContext, Family


def prepare_designs(spec: n.Spec, context: DesignContext, errors: ErrorCollector) -> list[CompiledDesign]:
    """Every design checked and prepared; the errors of all of them added to `errors`."""
    prepared = []
    for design in spec.designs:
        own = ErrorCollector()
        compiled = _prepare_one(design, context, own)
        errors.extend(own.diagnostics)
        if compiled is not None:
            prepared.append(compiled)
    return prepared


def _prepare_one(design: n.Design, context: DesignContext, errors: ErrorCollector) -> CompiledDesign | None:
    family = family_of(design, errors)
    if family is None:
        return None
    check_repeated_clauses(design, errors)
    check_clauses(design, family, errors)
    if errors.diagnostics:  # a clause the family does not take: its checks would only add noise
        return None
    resolved = family.check(design, context, errors)
    if resolved is None or errors.diagnostics:
        return None
    return family.prepare(resolved, context.seed, errors)


def family_of(design: n.Design, errors: ErrorCollector) -> Family | None:
    """The family the design's `analysis` clause names (the default family when it has none)."""
    clause = design.get("analysis")
    if clause is None:
        return registry.get(registry.DEFAULT)
    ref: n.Ref = clause.value[0]  # type: ignore[index]
    family = registry.get(ref.name)
    if family is None:
        errors.add(ref.span, f"unknown analysis '{ref.name}'", did_you_mean(ref.name, registry.names()))
    return family


def check_clauses(design: n.Design, family: Family, errors: ErrorCollector) -> None:
    """A clause the family does not take is an error at the clause, naming the family and what it takes."""
    others = [f for f in registry.all_families() if f.name != family.name]
    for clause in design.clauses:
        if clause.keyword in family.clauses:
            continue
        owner = next((f for f in others if clause.keyword in f.clauses), None)
        if owner is None:
            errors.add(clause.span, f"'{clause.keyword}' designs are parsed but not compiled by this version",
                       f"this clause belongs to the {clause.keyword} family")
            continue
        errors.add(clause.span, f"'{clause.keyword}' does not apply to {_a(family.title)} design",
                   f"{_a(family.title)} design takes: {', '.join(family.clauses)}; "
                   f"'{clause.keyword}' belongs to {owner.title} designs: declare 'analysis {owner.name}'")


def _a(word: str) -> str:
    return ("an " if word[0] in "aeiou" else "a ") + word
