"""Stage 3 for cue-visibility designs (seed 003): every clause checked, every name resolved, the data read.

```
design cue_visibility:
  over dilemmas x combinations 3 x consequences (with, without)
  conditions neutral, direct, puzzled(identity, easy, intermediate, hard)
  probes could_be(person in A..D) yesno, what_if(person in A..D) options "option1" | "option2"
```
Each condition and each probe names the `template` of the same name; the puzzle block named in
puzzled(...) (or the spec's only puzzle block) fixes people, attributes and the solution shape.
"""

from __future__ import annotations

import math
from typing import Any

from spec_audits.families.cue import clauses
from spec_audits.families.cue.score.events import VALID
from spec_audits.sdk import (
    DesignContext,
    Domain,
    ErrorCollector,
    Items,
    PropositionalConfig,
    Record,
    Row,
    Span,
    TypedDesign,
    check_attributes,
    did_you_mean,
    first_key,
    is_number,
    puzzle_config,
    read_rows,
    record,
)
from spec_audits.sdk import TemplateShape as Shape
from spec_audits.sdk import nodes as n

FORMATS = ("neutral", "direct", "puzzled")
PROBES = ("could_be", "what_if")
PROBE_FORMS = {"could_be": "yesno", "what_if": 'options "option1" | "option2"'}  # the answers the scorer reads
SETTINGS = ("with", "without")
BENEFIT = "benefit"
PUZZLE_FIELDS = ("clues", "domain", "text")  # what a puzzled template reads of its puzzle
AXES = ("combinations", "consequences")
BREAKDOWNS = ("person_status", "topic_group")  # optional data columns the scorer breaks results down by
CELL_FIELDS = ("format", "difficulty", "dilemma", "combination", "consequences", "probe", "person", BENEFIT,
               *BREAKDOWNS)  # a row's cell holds these and, per hidden attribute, the individual's value
SCORED_COLUMNS = ("model", "dilemma", "combination", "item", "individual", "format", "difficulty", "probe",
                  "consequences", "answer", "benefit", "status", "topic", "identified", "solved", "baseline",
                  "favor", "favor_eligible", "against", "against_eligible", "dimension", "group", "view")
"""The columns of the scorer's tables (families/cue/score) besides each attribute and its `said_` reply."""
CLAUSES = ("over", "conditions", "probes", "decode", "mode", "analysis", "system")
# restrict: the solved view of the scorer's tables; parse: strict reads only the valid answer tokens
# (the paper's rule), tolerant also folds 'Option 1' and falls back to the runner's parsed token;
# exclude_abstention RATE (checked apart) leaves models abstaining more often out of the bias tables.
ANALYSIS_OPTIONS = {"restrict": ("solved", "none"), "parse": ("strict", "tolerant")}
ABSTENTION_RATE: Domain = (lambda v: is_number(v) and 0 <= v < 1, "a rate from 0 to below 1")
_OPTION_SPELLINGS = {"option1": "option1", "option 1": "option1", "option2": "option2", "option 2": "option2"}


class CueProbe(Record):
    """One probe: its answer tokens, the people it asks about, its template, and the attributes its
    reply restates beside the answer (`restating gender and race`; none by default, as in the paper)."""

    name: str
    people: tuple[str, ...]
    tokens: tuple[str, ...]
    text: n.TemplateDef
    restating: tuple[str, ...] = ()


class CueDesign(Record):
    """A cue-visibility design, resolved: data rows read, every name pointing at its declaration."""

    design: n.Design
    dilemmas: list[dict[str, Any]]
    key: str
    combinations: int
    settings: tuple[str, ...]
    formats: dict[str, n.TemplateDef]
    puzzled: n.ConditionRef | None
    bands: tuple[str, ...]
    probes: tuple[CueProbe, ...]
    puzzle: PropositionalConfig
    system: n.TemplateDef | None
    decode: dict[str, Any]
    analysis: dict[str, Any]
    neutral_tokens: tuple[str, ...]


def resolve_cue(design: TypedDesign, context: DesignContext, errors: ErrorCollector) -> CueDesign | None:
    """Check every clause and read the data; None after reporting every problem found."""
    spec, seed = context.spec, context.seed
    before = len(errors.diagnostics)
    _check_required(design, errors)
    source, count, settings = _over(design, spec, errors)
    conditions = _conditions(design, errors)
    block, bands = _puzzled(conditions, spec, errors)
    has_puzzled = any(c.name == "puzzled" for c in conditions)
    config = _config(design, block if block or has_puzzled else _only_puzzle(spec), bands, has_puzzled, errors)
    probes = _probe_nodes(design, config, errors)
    formats = _format_templates(conditions, spec, errors)
    probe_texts = {p.name: _template(spec, p.name, p.span, f"probe '{p.name}'", errors) for p in probes}
    system = _system(design, spec, errors)
    decode = design.decode
    analysis = _analysis(design, errors)
    _mode(design, errors)
    options = [p.answer.tokens for p in probes if p.answer.kind == "options"]
    if "neutral" in formats and not options:
        errors.add(design.span, "the neutral condition needs an options probe for its answer tokens",
                   'add: what_if(person in A..D) options "option1" | "option2"')
    rows = read_rows(source, (BENEFIT,), seed, errors) if source is not None else None
    dilemmas = _with_benefit(source, rows, errors) if source is not None and rows is not None else None
    if config is not None:
        _check_attribute_names(block or _only_puzzle(spec), config, errors)
    if len(errors.diagnostics) == before and dilemmas is not None and config is not None:
        _check_enough_combinations(design, config, count, len(dilemmas), errors)
        _check_attributes([*formats.values(), *probe_texts.values()], set(dilemmas[0]), config, errors)
    if len(errors.diagnostics) > before or source is None or dilemmas is None or config is None:
        return None
    return CueDesign(
        design=design.node, dilemmas=dilemmas, key=first_key(source), combinations=count, settings=settings,
        formats={k: v for k, v in formats.items() if v is not None},
        puzzled=next((c for c in conditions if c.name == "puzzled"), None), bands=bands,
        probes=tuple(CueProbe(p.name, _people(config, p), p.answer.tokens, text, p.restating)
                     for p in probes if (text := probe_texts[p.name]) is not None),
        puzzle=config, system=system, decode=decode, analysis=analysis,
        neutral_tokens=options[0] if options else (),
    )


def _check_attributes(texts: list[n.TemplateDef | None], columns: set[str], config: PropositionalConfig,
                      errors: ErrorCollector) -> None:
    """`dilemma.situaton`, `puzzle.clue` or `p.gendr` of `for p in people`, in any branch, not only in those a
    sample render takes."""
    person = record(("name", *(a.name for a in config.attributes)))
    schema: dict[str, Shape] = {"dilemma": record(columns), "puzzle": record(PUZZLE_FIELDS), "people": Items(person)}
    for text in texts:
        if text is not None:
            check_attributes(text.text, f"template '{text.name}'", schema, errors)


def _check_attribute_names(block: n.PuzzleDef | None, config: PropositionalConfig, errors: ErrorCollector) -> None:
    """The scorer groups by each hidden attribute under its own name, beside its own columns: a name it
    uses already would mix the two."""
    taken = {*CELL_FIELDS, *SCORED_COLUMNS}
    clauses = [c for c in block.clauses if c.keyword == "attribute"] if block is not None else []
    for clause in clauses:
        name = str(clause.args[0])
        if name in taken or name.startswith("said_"):
            errors.add(clause.span, f"attribute '{name}' of puzzle '{config.name}' takes a name the cue-visibility "
                       "scorer uses for its own columns", f"rename the attribute, e.g. 'person_{name}' (taken: "
                       f"{', '.join(sorted(taken))} and said_*)")


def _check_required(design: TypedDesign, errors: ErrorCollector) -> None:
    for keyword in ("over", "conditions", "probes"):
        if design.clause(keyword) is None:
            errors.add(design.span, f"cue-visibility design '{design.name}' has no '{keyword}' clause",
                       "see specs/cue_visibility.spec")


def _over(design: TypedDesign, spec: n.Spec,
          errors: ErrorCollector) -> tuple[n.DataSource | None, int, tuple[str, ...]]:
    clause = design.clause(clauses.OVER.keyword)
    axes = design.get(clauses.OVER) or ()
    sources = {d.name: d for d in spec.data}
    source, count = None, 0
    settings: tuple[str, ...] = SETTINGS
    for axis in axes:
        if axis.name in AXES and axis.name in sources:
            errors.add(sources[axis.name].span, f"data source '{axis.name}' takes the name of a cue-visibility axis",
                       f"rename the data source; {', '.join(AXES)} are axis names")
        if axis.name in sources and axis.name not in AXES:
            if source is not None:
                errors.add(axis.span, f"'over' names a second data source '{axis.name}' (first: '{source.name}')",
                           "a cue-visibility design reads its dilemmas from one data source")
            source = source or sources[axis.name]
            if len(source.key) > 1:
                errors.add(source.span, f"data '{source.name}': dilemmas are keyed by one column, "
                           f"got {', '.join(source.key)}", "key the dilemmas by their id column")
        elif axis.name == "combinations":
            count = axis.count or 0
            if count < 1:
                errors.add(axis.span, "combinations needs a count >= 1", "write: combinations 3")
        elif axis.name == "consequences":
            settings = tuple(str(v) for v in axis.values) or SETTINGS
            for value in settings:
                if value not in SETTINGS:
                    errors.add(axis.span, f"unknown consequence setting '{value}'", did_you_mean(value, SETTINGS))
        else:
            errors.add(axis.span, f"unknown axis '{axis.name}'",
                       did_you_mean(axis.name, [*sources, *AXES]))
    if clause is not None and source is None:
        errors.add(clause.span, "'over' names no data source of dilemmas",
                   'declare: data dilemmas from "data/dilemmas.csv" key id, then: over dilemmas x ...')
    known = {*sources, *AXES}
    if clause is not None and all(a.name in known for a in axes) and not any(a.name == "combinations" for a in axes):
        errors.add(clause.span, "'over' has no combinations axis", "add: x combinations 3")
    return source, count, settings


def _check_enough_combinations(design: TypedDesign, config: PropositionalConfig, count: int, dilemmas: int,
                               errors: ErrorCollector) -> None:
    """A reuse group's dilemmas need count distinct combinations each, all different."""
    total = math.prod(math.perm(len(a.values), a.pick) for a in config.attributes)
    group = min(dilemmas, config.reuse.dilemmas)
    if config.reuse.distinct_combinations and group * count > total:
        axis = next(a for a in design.get(clauses.OVER) or () if a.name == "combinations")
        errors.add(axis.span, f"{group} dilemmas per puzzle x {count} combinations need {group * count} distinct "
                   f"combinations, but puzzle '{config.name}' has only {total}",
                   "lower the count, reuse each puzzle for fewer dilemmas, or add attribute values")


def _conditions(design: TypedDesign, errors: ErrorCollector) -> tuple[n.ConditionRef, ...]:
    conditions = design.conditions or ()
    seen: set[str] = set()
    for cond in conditions:  # an unknown name is reported by the shared checks from the family's declaration
        if cond.name in FORMATS and cond.name != "puzzled" and cond.args:
            errors.add(cond.span, f"condition '{cond.name}' takes no arguments")
        elif cond.name == "puzzled" and not cond.args:
            errors.add(cond.span, "puzzled needs a puzzle: puzzled(NAME, band, ...)",
                       "write: puzzled(identity, easy, intermediate, hard)")
        if cond.name in seen:
            errors.add(cond.span, f"condition '{cond.name}' is listed twice")
        seen.add(cond.name)
    return conditions


def _puzzled(conditions: tuple[n.ConditionRef, ...], spec: n.Spec,
             errors: ErrorCollector) -> tuple[n.PuzzleDef | None, tuple[str, ...]]:
    """The puzzle block and the bands that puzzled(NAME, band, ...) asks for."""
    cond = next((c for c in conditions if c.name == "puzzled" and c.args), None)
    if cond is None:
        return None, ()
    blocks = {p.name: p for p in spec.puzzles}
    name = str(cond.args[0])
    if name not in blocks:
        errors.add(cond.span, f"unknown puzzle '{name}' in puzzled(...)", did_you_mean(name, blocks))
        return None, ()
    block = blocks[name]
    bands = tuple(str(b) for b in cond.args[1:])
    declared = _declared_bands(block)
    for band in bands:
        if band not in declared:
            errors.add(cond.span, f"unknown difficulty band '{band}' for puzzle '{name}'", did_you_mean(band, declared))
    if len(set(bands)) != len(bands):
        errors.add(cond.span, "puzzled(...) lists a band twice")
    return block, tuple(b for b in bands if b in declared) or tuple(declared)


def _declared_bands(block: n.PuzzleDef) -> list[str]:
    clause = next((c for c in block.clauses if c.keyword == "bands"), None)
    if clause is None:
        return [b.name for b in PropositionalConfig(name=block.name).bands]
    return [str(b[0]) for b in clause.args if isinstance(b, tuple)]


def _only_puzzle(spec: n.Spec) -> n.PuzzleDef | None:
    """A design without puzzled(...) takes its people and attributes from the spec's one puzzle block."""
    return spec.puzzles[0] if len(spec.puzzles) == 1 else None


def _config(design: TypedDesign, block: n.PuzzleDef | None, bands: tuple[str, ...], has_puzzled: bool,
            errors: ErrorCollector) -> PropositionalConfig | None:
    """The puzzle config that fixes people, attributes and shape (for Direct too)."""
    if block is None:
        if not has_puzzled:  # puzzled(...) with an unknown puzzle is reported already
            errors.add(design.span, f"design '{design.name}' needs a puzzle block for its people and attributes",
                       "declare one 'puzzle NAME:' block")
        return None
    config = puzzle_config(block, errors, bands)
    if config is None:
        return None
    if not isinstance(config, PropositionalConfig) or config.shape.kind != "declared":
        errors.add(block.span, f"puzzle '{block.name}' must be propositional with a declared shape for a "
                   "cue-visibility design", "Direct shows the same assignment as the puzzle: declare 'shape canonical'")
        return None
    return config


def _probe_nodes(design: TypedDesign, config: PropositionalConfig | None,
                 errors: ErrorCollector) -> tuple[n.Probe, ...]:
    clause = design.clause(clauses.PROBES.keyword)
    probes = design.get(clauses.PROBES) or ()
    for probe in probes:
        if probe.name not in PROBES:
            errors.add(probe.span, f"unknown probe '{probe.name}'", did_you_mean(probe.name, PROBES))
        if len(set(probe.answer.tokens)) < 2 and probe.answer.kind == "options":  # other forms: the shared checks
            errors.add(probe.answer.span, f"probe '{probe.name}' needs two different answers: options \"a\" | \"b\"")
        elif probe.name in PROBES and set(probe.answer.tokens) != VALID[probe.name]:
            errors.add(probe.answer.span, f"probe '{probe.name}' is scored by the answers "
                       f"{' and '.join(sorted(VALID[probe.name]))}: the scorer would count every other answer as an "
                       "abstention", f"write: {probe.name}({probe.variable} in {probe.first}..{probe.last}) "
                       f"{PROBE_FORMS[probe.name]}")
        if config is not None and not {str(probe.first), str(probe.last)} <= set(config.people):
            errors.add(probe.span, f"probe '{probe.name}' ranges over {probe.first}..{probe.last}, but the "
                       f"puzzle's people are {', '.join(config.people)}",
                       f"write: {probe.name}({probe.variable} in {config.people[0]}..{config.people[-1]})")
        elif config is not None and not _people(config, probe):
            errors.add(probe.span, f"probe '{probe.name}' range {probe.first}..{probe.last} is empty")
        attributes = [a.name for a in config.attributes] if config is not None else []
        for name in probe.restating if config is not None else ():
            if name not in attributes:
                errors.add(probe.span, f"probe '{probe.name}' restates '{name}', which is not an attribute of "
                           f"puzzle '{config.name if config else ''}'", did_you_mean(name, attributes))
    names = [p.name for p in probes]
    if len(set(names)) != len(names):
        errors.add(clause.span if clause else design.span, "a probe is listed twice")
    return probes


def _people(config: PropositionalConfig, probe: n.Probe) -> tuple[str, ...]:
    people = config.people
    return tuple(people[people.index(str(probe.first)): people.index(str(probe.last)) + 1])


def _template(spec: n.Spec, name: str, span: Span, label: str, errors: ErrorCollector) -> n.TemplateDef | None:
    text = next((t for t in spec.texts if t.name == name and t.kind == "template"), None)
    if text is None:
        errors.add(span, f"{label} has no template: declare 'template {name} \"...\"'",
                   did_you_mean(name, [t.name for t in spec.texts]))
    return text


def _format_templates(conditions: tuple[n.ConditionRef, ...], spec: n.Spec,
                      errors: ErrorCollector) -> dict[str, n.TemplateDef | None]:
    return {c.name: _template(spec, c.name, c.span, f"condition '{c.name}'", errors)
            for c in conditions if c.name in FORMATS}


def _system(design: TypedDesign, spec: n.Spec, errors: ErrorCollector) -> n.TemplateDef | None:
    ref = design.system
    if ref is None:
        return None
    text = next((t for t in spec.texts if t.name == ref.name and t.kind == "system"), None)
    if text is None:
        errors.add(ref.span, f"unknown system '{ref.name}'",
                   did_you_mean(ref.name, [t.name for t in spec.texts if t.kind == "system"]))
    return text


def _analysis(design: TypedDesign, errors: ErrorCollector) -> dict[str, Any]:
    if design.analysis is None:
        return {"family": "cue_visibility"}
    ref, options = design.analysis.ref, design.analysis.options
    if ref.name != "cue_visibility":
        errors.add(ref.span, f"analysis '{ref.name}' does not fit a cue-visibility design", "use cue_visibility")
    takes = ", ".join(f"{name} {' | '.join(values)}" for name, values in ANALYSIS_OPTIONS.items())
    for option in options:  # an unknown key is reported by the shared checks from the family's declaration
        if option.name == "exclude_abstention":
            if not ABSTENTION_RATE[0](option.value):
                errors.add(option.span, f"exclude_abstention needs {ABSTENTION_RATE[1]}, got {option.value!r}",
                           "e.g. exclude_abstention 0.9: drop models whose What-if abstention exceeds 90%")
        elif option.name in ANALYSIS_OPTIONS and option.value not in ANALYSIS_OPTIONS[option.name]:
            errors.add(option.span, f"unknown analysis option '{option.name} {option.value}'",
                       f"cue_visibility takes: {takes}, exclude_abstention RATE")
    return {"family": "cue_visibility", **design.analysis.values}


def _mode(design: TypedDesign, errors: ErrorCollector) -> None:
    clause = design.clause("mode")
    if clause is not None and design.mode is not None and design.mode.name != "sample":
        errors.add(clause.span, "cue-visibility answers are read from free text: only 'mode sample' applies")


def _with_benefit(source: n.DataSource, rows: list[Row], errors: ErrorCollector) -> list[dict[str, Any]] | None:
    """Rows with `benefit` normalised to option1 | option2 (Option1, Option 1 and option1 all accepted)."""
    out = []
    for number, row in enumerate(rows, start=1):
        benefit = _OPTION_SPELLINGS.get(row[BENEFIT].strip().lower())
        if benefit is None:
            errors.add(source.span, f"data file '{source.path.value}': row {number} has benefit "
                       f"'{row[BENEFIT]}'", "benefit must be option1 or option2")
            return None
        out.append({**row, BENEFIT: benefit})
    return out
