"""What a design family hands to the shared stages: its clauses, its checks, expansion, scorer and report.

A family is one folder under families/ that exposes `FAMILY = Family(...)` from its __init__; the
registry (spec_audits/dispatch/registry.py) maps the design's declared analysis to it. The shared stages only ever
see this interface, never a family module.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from spec_audits.base.records import Record
from spec_audits.compiler import nodes as n
from spec_audits.compiler.check import Tables
from spec_audits.compiler.clauses import ClauseSpec
from spec_audits.compiler.errors import ErrorCollector
from spec_audits.compiler.family import CompiledDesign
from spec_audits.compiler.typed_design import EVERY_DESIGN, SHARED, TypedDesign

if TYPE_CHECKING:  # the statistics pull in scipy, the reader and the records pydantic: a spec check pays for none
    from spec_audits.contract.analysis_record import AnalysisRecord
    from spec_audits.contract.reader import Suite
    from spec_audits.runner.report.document import Document
    from spec_audits.stats.power import Variance


class DesignContext(Record):
    """What a family's checks may look at besides its own design: the spec and its name tables."""

    spec: n.Spec
    tables: Tables
    seed: int


Check = Callable[[TypedDesign, DesignContext, ErrorCollector], Any]
"""Stage 3: resolve every clause of the design (its shared clauses already typed and resolved, its own
read with `design.get(SPEC)`); None (after reporting) when it cannot be resolved."""
Prepare = Callable[[Any, int, ErrorCollector], CompiledDesign | None]
"""Stage 4: compile templates, prove balance, fix what expansion needs; None after reporting."""
Score = Callable[[Path, Path, dict[str, Any]], list[str]]
"""`spec score RUN -o OUT` with the options the family declared: lines to print."""
ScoreRuns = Callable[[list[Path], Path, dict[str, Any]], list[str]]
"""`spec score RUN RUN ... -o OUT` (or a study folder): several runs scored together."""
Report = Callable[[Path, Path], "Document"]
"""`spec report SCORE`: the report document, its Images under the second path, drawn only when the report is
written (`spec score` builds it for its first table and draws nothing)."""
CheckGenerator = Callable[[n.GeneratorDef, DesignContext, ErrorCollector], Any]
"""A `generator` block's clauses resolved; None after reporting."""
Generate = Callable[[Any, dict[str, Any]], list[str]]
"""`spec generate`: run a resolved generator with the command's options; lines to print."""
Variances = Callable[["Suite", Path | None, float], list["Variance"]]
"""`spec plan SUITE [--pilot RUN] --icc RHO`: how the family's statistics' variances are computed, one
Variance per statistic at the suite's current size (answers per arm, clusters), its unit variance and
intra-cluster correlation from the pilot run where given, else stated assumptions (RHO the assumed icc)."""
Convert = Callable[[list[Path], Path, dict[str, Any]], list[str]]
"""`spec import FORMAT FILE... --out OUT`: another harness's files into a run (or score) folder; lines to print."""


class Importer(Record):
    """One format `spec import` reads, offered by the family whose runs (or tables) it writes."""

    name: str  # the FORMAT argument, e.g. choices-probe
    summary: str  # one line for `spec import --help`
    convert: Convert  # (files, out, options: suite, skip_unmatched) -> lines; a located ImportInputError otherwise


class TableKind(Record):
    """A published table `spec score --NAME FILE` scores instead of a run folder, offered by the family whose
    statistics it holds."""

    name: str  # the option, --NAME (e.g. counts)
    what: str  # how messages name it, e.g. "a counts table"
    help: str  # the option's help in `spec score --help`
    score: Score  # (file, out, options) -> lines; a located ScoreInputError for a bad row


class Form(Record):
    """One thing a design may write: the name the checks match it by, and how the docs show it written."""

    name: str  # an answer kind (`choice`), a condition name (`baseline`, `toward`), an analysis option key
    written: str  # e.g. 'choice "A" | "B"', 'toward A, toward B', 'alpha X (0 < X < 1)'


class Family(Record):
    """One audit design family: chosen by `analysis NAME` in a design, recorded as manifest.analysis.family."""

    name: str  # the analysis name, e.g. influence_pairs
    title: str  # how messages name the design, e.g. "cue-visibility"
    clauses: tuple[str, ...]  # the design clauses it takes (shared or its own); any other is a located error
    answers: tuple[Form, ...]  # the answer forms it takes (of the `answer` clause, or of each probe)
    conditions: tuple[Form, ...]  # the conditions it takes, by name
    analysis_options: tuple[Form, ...]  # the keys its `analysis NAME KEY VALUE, ...` clause takes
    check: Check
    prepare: Prepare
    score: Score
    report: Report
    score_options: tuple[str, ...] = ()  # `spec score` options it reads that another family declares (parameter names)
    score_flags: tuple[click.Option, ...] = ()  # `spec score` options it adds (and reads)
    docs: str = ""  # its documentation page, relative to the repository root
    score_runs: ScoreRuns | None = None  # several runs (a study) together, for a family that pools them
    tables: tuple[TableKind, ...] = ()  # published tables it scores: `spec score --NAME FILE`
    check_generator: CheckGenerator | None = None  # for a family whose data a `generator` block writes
    generate: Generate | None = None
    importers: tuple[Importer, ...] = ()  # `spec import` formats: published transcripts or tables of other harnesses
    # what its compile writes in manifest.analysis, closed: the record class, or `imported(module, name)` of it
    # (a spec check then never imports it, nor pydantic); None: AnalysisRecord itself, `family` and no other key
    analysis_record: type[AnalysisRecord] | Callable[[], type[AnalysisRecord]] | None = None
    syntax: tuple[ClauseSpec[Any], ...] = ()  # its own clauses' keywords and argument shapes (compiler/clauses.py)
    variances: Variances | None = None  # `spec plan`: its statistics' variances (spec_audits/stats/power.py)
    reads_replies: bool = False  # its scorer reads each reply itself: a reply counts as scorable though unparsed

    def reads(self) -> set[str]:
        """The `spec score` options (parameter names) its scorers read; any other given is refused."""
        return {*self.score_options, *(str(flag.name) for flag in self.score_flags)}

    def record_type(self) -> type[AnalysisRecord]:
        """Its analysis record's class (analysis_record), imported now where the family names it lazily."""
        if self.analysis_record is None:
            from spec_audits.contract.analysis_record import AnalysisRecord

            return AnalysisRecord
        if isinstance(self.analysis_record, type):
            return self.analysis_record
        return self.analysis_record()


def accepts_table(families: list[Family]) -> str:
    """docs/language.md's tables of what each family's designs accept and of every design clause's
    arguments, from the declarations above; each family links its documentation page (Family.docs)."""
    lines = ["| design family | clauses | answer forms | conditions | analysis options |", "|---|---|---|---|---|"]
    for family in families:
        cells = [f"[`analysis {family.name}`]({_docs_link(family.docs)}) ({family.title})", _written(family.clauses),
                 _written(f.written for f in family.answers), _written(f.written for f in family.conditions),
                 _written(f.written for f in family.analysis_options)]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n\n" + _clauses_table(families)


def _clauses_table(families: list[Family]) -> str:
    """Every design clause: its keyword and arguments (its declared shape), what it is for, who takes it."""
    declared = (*SHARED, *(spec for family in families for spec in family.syntax))
    specs = {spec.keyword: spec for spec in declared if spec.block == "design"}
    lines = ["| clause | what it gives | taken by |", "|---|---|---|"]
    for keyword in sorted(specs):
        spec = specs[keyword]
        takers = "every design" if keyword in EVERY_DESIGN else \
            ", ".join(f"`{f.name}`" for f in families if keyword in f.clauses) or "no family yet"
        summary = spec.summary.replace("|", "\\|")
        lines.append(f"| {_written([f'{keyword} {spec.shape.written()}'])} | {summary} | {takers} |")
    return "\n".join(lines) + "\n"


def _docs_link(docs: str) -> str:
    """A family's page as linked from docs/language.md."""
    return docs.removeprefix("docs/") if docs.startswith("docs/") else f"../{docs}"


def _written(forms: Iterable[str]) -> str:
    return ", ".join(f"`{form}`".replace("|", "\\|") for form in forms) or "none"


def imported(module: str, name: str) -> Callable[[], Any]:
    """`module.name` itself, imported on first call: a family's analysis record is a pydantic model, which
    checking a spec should not pay for (Family.analysis_record)."""
    return lambda: getattr(importlib.import_module(module), name)


def lazy(module: str, name: str) -> Callable[..., Any]:
    """`module.name`, imported on first call: a family's scorer and report pull in pandas, scipy and
    matplotlib, which compiling a spec should not pay for."""

    def call(*args: Any) -> Any:
        return getattr(importlib.import_module(module), name)(*args)

    return call
