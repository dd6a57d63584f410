"""The family registry: analysis name -> Family, from three places.

* Built in: one line in BUILTIN (analysis name -> the module whose FAMILY it is).
* Installed: a family in another installed distribution declares an entry point in the group
  `spec_audits.families`, named by its analysis name and pointing at its Family (`echo =
  "my_audits.echo:FAMILY"`, or at a module that exposes FAMILY): it works with no edit here.
* Registered in-process: tests register their own families with register()/unregister().

A family is imported on first use, so `spec compile` never loads a scorer and no stage pays for a family
it does not meet. A family that cannot be loaded, or a name that two of them claim, is a RegistryError
naming the distributions and what to do, raised when that name is looked up. The installed families are read
(importlib.metadata, ~25 ms of a `spec check`) where a name that is not built in is looked up or the families
are listed; a built-in name is looked up without it unless a distribution on the path may declare that name
(`_may_declare` tells from their entry_points.txt files alone), so a spec of built-in families pays for neither.

`write_language_docs()` rewrites docs/language.md's table of what each builtin family accepts from their
declarations (tests/families/test_accepts_table.py fails while the two differ, and says how to run it).
"""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Iterable
from functools import cache
from importlib.machinery import PathFinder
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

import click
from lark.exceptions import LarkError

from spec_audits.compiler.clauses import ClauseSpec, Syntax, conflicts
from spec_audits.compiler.parse import DEFAULT_ANALYSIS, LazySyntax, spec_parser
from spec_audits.compiler.typed_design import GENERATOR_ANALYSIS, SHARED
from spec_audits.puzzles.syntax import SYNTAX as PUZZLE_SYNTAX
from spec_audits.sdk.interface import Family, accepts_table

if TYPE_CHECKING:
    from importlib.metadata import EntryPoint, EntryPoints

SHARED_KEYWORDS = {spec.keyword for spec in SHARED} | {"generator analysis"} | {
    f"puzzle {spec.keyword}" for spec in PUZZLE_SYNTAX}

BUILTIN: dict[str, str] = {
    "influence_pairs": "spec_audits.families.influence",
    "cue_visibility": "spec_audits.families.cue",
    "bias_decomposition": "spec_audits.families.cognitive_bias",
    "effects": "spec_audits.families.effects",
    "puzzle_solving": "spec_audits.families.puzzle_solving",
}
DEFAULT = "influence_pairs"  # the family of a design that declares no analysis
ENTRY_POINTS = "spec_audits.families"  # the entry-point group of families installed from other distributions
_REGISTERED: dict[str, Family] = {}


class RegistryError(click.ClickException):
    """An installed family that cannot be used: it fails to load, or its name is taken twice."""


def register(family: Family) -> None:
    _REGISTERED[family.name] = family


def unregister(name: str) -> None:
    _REGISTERED.pop(name, None)


def entry_points(group: str) -> EntryPoints:
    """The group's entry points of the installed distributions (importlib.metadata, imported only now)."""
    from importlib.metadata import entry_points as read

    return read(group=group)


@cache
def installed(only: frozenset[str] | None = None) -> dict[str, tuple[EntryPoint, ...]]:
    """Analysis name -> the entry points of installed distributions that declare it, of the names `only` where
    given (none read unless a distribution may declare one of them); read once a process (tests that install a
    distribution call installed.cache_clear())."""
    found: dict[str, tuple[EntryPoint, ...]] = {}
    if only is not None and not _may_declare(only):
        return found
    for point in entry_points(group=ENTRY_POINTS):
        if only is None or point.name in only:
            found[point.name] = (*found.get(point.name, ()), point)
    return found


def _foreign(finder: object) -> bool:
    """Whether `finder` finds distributions somewhere other than the sys.path folders read here: Python's own
    PathFinder and its importlib_metadata backport's (which libraries such as litellm's dependencies put on
    sys.meta_path) read exactly those."""
    return hasattr(finder, "find_distributions") and finder is not PathFinder and not (
        type(finder).__module__ == "importlib_metadata" and type(finder).__name__ == "MetadataPathFinder")


def _may_declare(names: frozenset[str]) -> bool:
    """Whether an installed distribution may declare one of `names` in ENTRY_POINTS, told from the entry_points.txt
    of each *.dist-info and *.egg-info folder on sys.path, where importlib.metadata finds them; True wherever that
    cannot tell: a path entry that is an egg or no folder (a zip), a finder of distributions besides Python's."""
    if any(map(_foreign, sys.meta_path)):
        return True
    for entry in sys.path:
        try:
            children = os.listdir(entry or ".")
        except NotADirectoryError:
            return True
        except OSError:  # a path entry that is not there
            continue
        if entry.lower().endswith(".egg") or any(
                child.lower().endswith((".dist-info", ".egg-info"))
                and _declared(os.path.join(entry, child, "entry_points.txt"), names) for child in children):
            return True
    return False


def _declared(path: str, names: frozenset[str]) -> bool:
    """Whether the entry_points.txt at `path` (if any) names one of `names` in its ENTRY_POINTS section."""
    try:
        with open(path, "rb") as handle:
            data = handle.read()
    except OSError:  # none (most distributions), or an egg-info that is a file
        return False
    if ENTRY_POINTS.encode() not in data:  # the section's name is written out in full
        return False
    section = None
    for line in map(str.strip, data.decode("utf-8", "replace").splitlines()):
        if line.startswith("[") and line.endswith("]"):
            section = line[1:-1].strip()
        elif section == ENTRY_POINTS and line.partition("=")[0].strip() in names:
            return True
    return False


def names() -> list[str]:
    return sorted({*BUILTIN, *_REGISTERED, *installed()})


def get(name: str) -> Family | None:
    """The family registered under `name`, or None when no family has that name."""
    if name in BUILTIN:
        _refuse_clash(name, installed(frozenset(BUILTIN)).get(name, ()))
    if name not in _REGISTERED and name in BUILTIN:
        _REGISTERED[name] = importlib.import_module(BUILTIN[name]).FAMILY
    elif name not in _REGISTERED and name in installed():
        _REGISTERED[name] = _load(name, installed()[name])
    return _REGISTERED.get(name)


def all_families() -> list[Family]:
    return [family for name in names() if (family := get(name)) is not None]


def loadable() -> list[Family]:
    """Every family that loads, the built-in ones first in BUILTIN's order (so that what they add to a
    command keeps its place), then the others by name; one that cannot be loaded is left out here (its
    error comes when a design, run or table names it), and so is an installed one whose clause or score
    option takes the name of one before it (two plug-ins clashing: the first by name keeps it)."""
    found: list[Family] = []
    for name in [*BUILTIN, *(name for name in names() if name not in BUILTIN)]:
        try:
            family = get(name)
        except RegistryError:  # a built-in family clashing with an installed one is still itself
            family = importlib.import_module(BUILTIN[name]).FAMILY if name in BUILTIN else None
        if family is not None and (name in BUILTIN or not any(_clash(family, other) for other in found)):
            found.append(family)
    return found


def syntax(analyses: Iterable[str] | None = None) -> Syntax:
    """The clauses the parser knows: the shared design clauses, the puzzle block's, and the own clauses of
    the families named in `analyses` (compiler/parse.py `DEFAULT_ANALYSIS` for the default family; a name no
    family has adds none: its error comes when the design is checked; a named family that cannot be used is
    its RegistryError), or of every family that loads when `analyses` is None. One keyword with two shapes is
    an error."""
    families = loadable() if analyses is None else _named(analyses)
    declared: list[ClauseSpec[Any]] = [*SHARED, GENERATOR_ANALYSIS, *PUZZLE_SYNTAX]
    owners: dict[str, list[str]] = {}
    for family in families:
        for spec in family.syntax:
            declared.append(spec)
            clause = _clause_name(spec)
            owners.setdefault(clause, []).append(family.name)
    for name in conflicts(tuple(declared)):
        who = ", ".join(owners.get(name, [])) + (" and the shared clauses" if name in SHARED_KEYWORDS else "")
        raise RegistryError(f"the clause {name!r} is declared with different argument shapes by {who}: "
                            "give one of them another keyword")
    return tuple(declared)


def _named(analyses: Iterable[str]) -> list[Family]:
    """The families of these analysis names that load, in BUILTIN's order then by name (so that a spec's
    grammar, and lark's cache of it, does not depend on the order its designs are written in)."""
    wanted = {DEFAULT if name == DEFAULT_ANALYSIS else name for name in analyses}
    found = []
    for name in [*(name for name in BUILTIN if name in wanted), *sorted(wanted - set(BUILTIN))]:
        family = get(name)  # a family the spec names that cannot be used: its error, naming its distribution
        if family is not None:
            found.append(family)
    return found


SPEC_SYNTAX = LazySyntax(syntax, syntax)  # what a spec file is parsed with: its own families' clauses first


def _origin(point: EntryPoint) -> str:
    dist = point.dist
    owner = f"{dist.name} {dist.version}" if dist is not None else "an installed distribution"
    return f"{owner} (entry point {point.name} = {point.value})"


def _refuse_clash(name: str, points: tuple[EntryPoint, ...]) -> None:
    if points:
        raise RegistryError(f"design family {name!r} is built into spec, and {_origin(points[0])} declares it "
                            f"too: rename that family, or uninstall its distribution")


def _load(name: str, points: tuple[EntryPoint, ...]) -> Family:
    """The one installed family named `name`, checked to be a Family of that name."""
    if len(points) > 1:
        raise RegistryError(f"design family {name!r} is declared by {len(points)} installed distributions: "
                            + "; ".join(sorted(map(_origin, points))) + ". Uninstall all but one of them")
    point = points[0]
    try:
        family = _built(point.load())
    except Exception as err:  # a third party's import: any failure is theirs to report, not a traceback
        raise RegistryError(f"design family {name!r} from {_origin(point)} could not be loaded: "
                            f"{type(err).__name__}: {err}. Reinstall or uninstall that distribution") from None
    if not isinstance(family, Family):
        raise RegistryError(f"design family {name!r} from {_origin(point)} is a {type(family).__name__}, not a "
                            "Family: point the entry point at a Family, or at a module that defines FAMILY")
    if family.name != name:
        raise RegistryError(f"design family {name!r} from {_origin(point)} calls itself {family.name!r}: name the "
                            "entry point by the family's analysis name")
    _check_boundary(family, _origin(point))
    return family


def _built(loaded: object) -> object:
    """The FAMILY an entry point loaded (itself or its module's), with its analysis record's validator built:
    CLOSED defers that to first use, so a record pydantic cannot build fails here, as it did at import."""
    family = getattr(loaded, "FAMILY", None) if isinstance(loaded, ModuleType) else loaded
    if isinstance(family, Family):
        family.record_type().model_rebuild(force=True)
    return family


def _check_boundary(family: Family, origin: str) -> None:
    """An installed family may add to the language and to `spec score`, never change what is there: its
    clauses must build into the grammar beside the shared ones and keep the built-in families' shapes, and its
    score options must not take a built-in family's name. A RegistryError naming both otherwise."""
    where = f"design family {family.name!r} from {origin}"
    for spec in family.syntax:
        problem = _grammar_problem(spec)
        if problem is not None:
            raise RegistryError(f"{where}: its clause {_clause_name(spec)!r} does not fit the spec grammar "
                                f"({problem}): change that clause's shape, or uninstall the distribution")
    for other in (importlib.import_module(module).FAMILY for module in BUILTIN.values()):
        clash = _clash(family, other)
        if clash is not None:
            raise RegistryError(f"{where}: {clash} of the built-in family {other.name!r} "
                                "(it would change that one's meaning): rename it, or uninstall the distribution")


def _grammar_problem(spec: ClauseSpec[Any]) -> str | None:
    """Why the clause cannot join the shared grammar (lark's first line), or None when it can."""
    declared = (*SHARED, GENERATOR_ANALYSIS, *PUZZLE_SYNTAX, spec)
    if conflicts(declared):
        return "the shared clause of that keyword has another shape"
    try:
        spec_parser(declared)
    except LarkError as err:
        return str(err).strip().splitlines()[0]
    return None


def _clash(family: Family, other: Family) -> str | None:
    """What of `family` takes a name of `other`: a clause keyword with another shape, or a score option."""
    for name in conflicts((*other.syntax, *family.syntax)):
        return f"its clause {name!r} has another shape than the clause {name!r}"
    theirs = {opt: flag.name for flag in other.score_flags for opt in (*flag.opts, str(flag.name))}
    for flag in family.score_flags:
        for opt in (*flag.opts, str(flag.name)):
            if opt in theirs:
                return f"its `spec score` option {opt!r} takes the name of the option {theirs[opt]!r}"
    return None


def _clause_name(spec: ClauseSpec[Any]) -> str:
    return spec.keyword if spec.block == "design" else f"{spec.block} {spec.keyword}"


LANGUAGE_DOCS = Path(__file__).resolve().parents[2] / "docs" / "language.md"
WRITE_COMMAND = 'python -c "from spec_audits.dispatch.registry import write_language_docs; write_language_docs()"'
TABLE_BEGIN = "<!-- generated from each family's declarations (spec_audits/dispatch/registry.py): do not edit -->\n"
TABLE_END = "<!-- end of the generated table -->\n"


def with_accepts_table(docs: str) -> str:
    """The docs text with the table between its markers rewritten from the builtin families' declarations."""
    head, rest = docs.split(TABLE_BEGIN, 1)
    _, tail = rest.split(TABLE_END, 1)
    builtin = [family for name in sorted(BUILTIN) if (family := get(name)) is not None]
    return head + TABLE_BEGIN + accepts_table(builtin) + TABLE_END + tail


def write_language_docs() -> None:
    """Rewrite docs/language.md's table (WRITE_COMMAND runs this)."""
    LANGUAGE_DOCS.write_text(with_accepts_table(LANGUAGE_DOCS.read_text(encoding="utf-8")), encoding="utf-8")
