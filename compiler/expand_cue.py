"""Stage 4 for cue-visibility designs (seed 003): resolve, generate puzzles, expand into suite rows.

```
design cue_visibility:
  over dilemmas x combinations 3 x consequences (with, without)
  conditions neutral, direct, puzzled(identity, easy, intermediate, hard)
  probes could_be(person in A..D) yesno, what_if(person in A..D) options "option1" | "option2"
```
Each condition and each probe renders the `template` of the same name. Neutral: one row per (dilemma,
consequence setting), answered with the options probe's tokens. Direct and every Puzzled band: per
(dilemma, combination, consequence setting) one stateless row per probe and person. The same
combinations serve Direct and every band; one puzzle skeleton per band serves a reuse group of dilemmas.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from compiler import nodes as n
from compiler.check import _check_repeated_clauses, _decode
from compiler.data_source import Row, read_rows
from compiler.errors import ErrorCollector, Span, did_you_mean
from compiler.puzzle_block import puzzle_config
from compiler.puzzles import (
    PropositionalConfig,
    PuzzleError,
    Skeleton,
    draw_selections,
    expect_of,
    generate_skeleton,
    instantiate,
    reuse_groups,
)
from compiler.puzzles.validate import parse_cell
from compiler.templates import CompiledText, check_render, compile_text

FORMATS = ("neutral", "direct", "puzzled")
PROBES = ("could_be", "what_if")
SETTINGS = ("with", "without")
BENEFIT = "benefit"
CLAUSES = ("over", "conditions", "probes", "decode", "mode", "analysis", "system")
NEUTRAL_NAMES = {"dilemma", "consequences", "answers"}
CUED_NAMES = NEUTRAL_NAMES | {"people", "person", "probe"}
NAMES = {"neutral": NEUTRAL_NAMES, "direct": CUED_NAMES, "puzzled": CUED_NAMES | {"puzzle"}}
PROBE_NAMES = {"dilemma", "person"}
_OPTION_SPELLINGS = {"option1": "option1", "option 1": "option1", "option2": "option2", "option 2": "option2"}

Selection = dict[str, list[str]]


@dataclass(frozen=True)
class CueProbe:
    name: str
    people: tuple[str, ...]
    tokens: tuple[str, ...]
    template: CompiledText


@dataclass
class CompiledCue:
    """A cue-visibility design with its data read, templates compiled and puzzles certified."""

    design: n.Design
    data: str
    dilemmas: list[Row]
    key: str
    settings: tuple[str, ...]
    formats: dict[str, CompiledText]
    bands: tuple[str, ...]
    probes: tuple[CueProbe, ...]
    puzzle: PropositionalConfig
    system: CompiledText | None
    decode: dict[str, Any]
    analysis: dict[str, Any]
    neutral_tokens: tuple[str, ...]
    combinations: dict[str, list[Selection]] = field(default_factory=dict)
    puzzles: dict[tuple[str, str, int], dict[str, Any]] = field(default_factory=dict)
    skeletons: int = 0

    @property
    def name(self) -> str:
        return self.design.name

    @property
    def span(self) -> Span:
        return self.design.span

    @property
    def mode(self) -> str:
        return "sample"

    @property
    def balance_keys(self) -> tuple[str, ...]:
        return ("dilemma", "consequences")

    @property
    def shared(self) -> dict[str, str]:
        return {}

    @property
    def served(self) -> dict[str, list[Any]]:
        return {}

    def summary(self) -> str:
        per_dilemma = len(next(iter(self.combinations.values()), []))
        probes = sum(len(p.people) for p in self.probes)
        return (f"{len(self.dilemmas)} dilemmas x {per_dilemma} combinations x {len(self.settings)} consequence "
                f"settings; conditions {', '.join(self.formats)} (bands {', '.join(self.bands) or 'none'}); "
                f"{probes} probes per item; {len(self.puzzles)} certified puzzles from {self.skeletons} skeletons")

    def rows(self) -> Iterator[dict[str, Any]]:
        return expand(self)


# ---- resolution -------------------------------------------------------------------
def prepare_cue(design: n.Design, spec: n.Spec, seed: int, errors: ErrorCollector) -> CompiledCue | None:
    """Check every clause, read the data, compile templates, draw combinations and certify puzzles."""
    before = len(errors.diagnostics)
    _check_clauses(design, errors)
    source, count, settings = _over(design, spec, errors)
    conditions = _conditions(design, errors)
    block, bands = _puzzled(conditions, spec, errors)
    has_puzzled = any(c.name == "puzzled" for c in conditions)
    config = _config(design, block if block or has_puzzled else _only_puzzle(spec), bands, has_puzzled, errors)
    probes = _probe_nodes(design, config, errors)
    formats = _format_templates(conditions, spec, errors)
    probe_templates = {p.name: _template(spec, p.name, p.span, f"probe '{p.name}'", PROBE_NAMES, errors)
                       for p in probes}
    system = _system(design, spec, errors)
    decode = _decode(design, errors)
    analysis = _analysis(design, errors)
    _mode(design, errors)
    rows = read_rows(source, (BENEFIT,), errors) if source is not None else None
    if len(errors.diagnostics) > before or rows is None or config is None or source is None:
        return None
    dilemmas = _with_benefit(source, rows, errors)
    options = [p for p in probes if p.answer.kind == "options"]
    if "neutral" in formats and not options:
        errors.add(design.span, "the neutral condition needs an options probe for its answer tokens",
                   'add: what_if(person in A..D) options "option1" | "option2"')
    if len(errors.diagnostics) > before or dilemmas is None:
        return None
    compiled_probes = tuple(CueProbe(p.name, _people(config, p), p.answer.tokens, probe_templates[p.name])
                            for p in probes if probe_templates[p.name] is not None)
    compiled = CompiledCue(design, source.name, dilemmas, source.key or "", settings,
                           {k: v for k, v in formats.items() if v is not None}, bands, compiled_probes, config,
                           system, decode, analysis, options[0].answer.tokens if options else ())
    _check_sample_render(compiled, errors)
    if len(errors.diagnostics) > before:
        return None
    return _generate(compiled, count, seed, conditions, errors)


def _check_clauses(design: n.Design, errors: ErrorCollector) -> None:
    _check_repeated_clauses(design, errors)
    for clause in design.clauses:
        if clause.keyword == "conversation":
            errors.add(clause.span, "'conversation' designs are parsed but not compiled by this version",
                       "this clause belongs to the conversation family")
        elif clause.keyword not in CLAUSES:
            errors.add(clause.span, f"'{clause.keyword}' does not apply to a cue-visibility design",
                       "a cue-visibility design takes: " + ", ".join(CLAUSES))
    for keyword in ("over", "conditions", "probes"):
        if design.get(keyword) is None:
            errors.add(design.span, f"cue-visibility design '{design.name}' has no '{keyword}' clause",
                       "see specs/cue_visibility.spec")


def _over(design: n.Design, spec: n.Spec,
          errors: ErrorCollector) -> tuple[n.DataSource | None, int, tuple[str, ...]]:
    clause = design.get("over")
    axes: tuple[n.Axis, ...] = clause.value if clause is not None else ()  # type: ignore[assignment]
    sources = {d.name: d for d in spec.data}
    source, count, settings = None, 0, SETTINGS
    for axis in axes:
        if axis.name in sources:
            source = sources[axis.name]
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
                       did_you_mean(axis.name, [*sources, "combinations", "consequences"]))
    if clause is not None and source is None:
        errors.add(clause.span, "'over' names no data source of dilemmas",
                   'declare: data dilemmas from "data/dilemmas.csv" key id, then: over dilemmas x ...')
    known = {*sources, "combinations", "consequences"}
    if clause is not None and all(a.name in known for a in axes) and not any(a.name == "combinations" for a in axes):
        errors.add(clause.span, "'over' has no combinations axis", "add: x combinations 3")
    return source, count, settings


def _conditions(design: n.Design, errors: ErrorCollector) -> tuple[n.ConditionRef, ...]:
    clause = design.get("conditions")
    conditions: tuple[n.ConditionRef, ...] = clause.value if clause is not None else ()  # type: ignore[assignment]
    seen: set[str] = set()
    for cond in conditions:
        if cond.toward is not None or cond.name not in FORMATS:
            errors.add(cond.span, f"unknown condition '{cond.key}' for a cue-visibility design",
                       did_you_mean(cond.key, FORMATS))
        elif cond.name != "puzzled" and cond.args:
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


def _config(design: n.Design, block: n.PuzzleDef | None, bands: tuple[str, ...], has_puzzled: bool,
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


def _probe_nodes(design: n.Design, config: PropositionalConfig | None,
                 errors: ErrorCollector) -> tuple[n.Probe, ...]:
    clause = design.get("probes")
    probes: tuple[n.Probe, ...] = clause.value if clause is not None else ()  # type: ignore[assignment]
    for probe in probes:
        if probe.name not in PROBES:
            errors.add(probe.span, f"unknown probe '{probe.name}'", did_you_mean(probe.name, PROBES))
        kind = probe.answer.kind
        if kind not in ("yesno", "options") or len(set(probe.answer.tokens)) < 2:
            errors.add(probe.answer.span, f"probe '{probe.name}' needs 'yesno' or 'options \"a\" | \"b\"' answers")
        if config is not None and not {str(probe.first), str(probe.last)} <= set(config.people):
            errors.add(probe.span, f"probe '{probe.name}' ranges over {probe.first}..{probe.last}, but the "
                       f"puzzle's people are {', '.join(config.people)}",
                       f"write: {probe.name}({probe.variable} in {config.people[0]}..{config.people[-1]})")
        elif config is not None and not _people(config, probe):
            errors.add(probe.span, f"probe '{probe.name}' range {probe.first}..{probe.last} is empty")
    names = [p.name for p in probes]
    if len(set(names)) != len(names):
        errors.add(clause.span if clause else design.span, "a probe is listed twice")  # type: ignore[union-attr]
    return probes


def _people(config: PropositionalConfig, probe: n.Probe) -> tuple[str, ...]:
    people = config.people
    return tuple(people[people.index(str(probe.first)): people.index(str(probe.last)) + 1])


def _template(spec: n.Spec, name: str, span: Span, label: str, provided: set[str],
              errors: ErrorCollector) -> CompiledText | None:
    text = next((t for t in spec.texts if t.name == name and t.kind == "template"), None)
    if text is None:
        errors.add(span, f"{label} has no template: declare 'template {name} \"...\"'",
                   did_you_mean(name, [t.name for t in spec.texts]))
        return None
    return compile_text(text.text, f"template '{name}'", provided, errors)


def _format_templates(conditions: tuple[n.ConditionRef, ...], spec: n.Spec,
                      errors: ErrorCollector) -> dict[str, CompiledText | None]:
    return {c.name: _template(spec, c.name, c.span, f"condition '{c.name}'", NAMES[c.name], errors)
            for c in conditions if c.name in FORMATS}


def _system(design: n.Design, spec: n.Spec, errors: ErrorCollector) -> CompiledText | None:
    clause = design.get("system")
    if clause is None:
        return None
    ref: n.Ref = clause.value  # type: ignore[assignment]
    text = next((t for t in spec.texts if t.name == ref.name and t.kind == "system"), None)
    if text is None:
        errors.add(ref.span, f"unknown system '{ref.name}'",
                   did_you_mean(ref.name, [t.name for t in spec.texts if t.kind == "system"]))
        return None
    return compile_text(text.text, f"system '{ref.name}'", set(), errors)


def _analysis(design: n.Design, errors: ErrorCollector) -> dict[str, Any]:
    clause = design.get("analysis")
    if clause is None:
        return {"family": "cue_visibility"}
    ref, options = clause.value  # type: ignore[misc]
    if ref.name != "cue_visibility":
        errors.add(ref.span, f"analysis '{ref.name}' does not fit a cue-visibility design", "use cue_visibility")
    for option in options:
        if option.name != "restrict" or option.value not in ("solved", "none"):
            errors.add(option.span, f"unknown analysis option '{option.name} {option.value}'",
                       "cue_visibility takes: restrict solved | restrict none")
    return {"family": "cue_visibility", **{o.name: o.value for o in options}}


def _mode(design: n.Design, errors: ErrorCollector) -> None:
    clause = design.get("mode")
    if clause is not None and clause.value.name != "sample":  # type: ignore[attr-defined]
        errors.add(clause.span, "cue-visibility answers are read from free text: only 'mode sample' applies")


def _with_benefit(source: n.DataSource, rows: list[Row], errors: ErrorCollector) -> list[Row] | None:
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


# ---- generation -------------------------------------------------------------------
def _generate(compiled: CompiledCue, count: int, seed: int, conditions: tuple[n.ConditionRef, ...],
              errors: ErrorCollector) -> CompiledCue | None:
    """Draw every dilemma's combinations (distinct within a reuse group) and certify every puzzle."""
    config = compiled.puzzle
    ids = [row[compiled.key] for row in compiled.dilemmas]
    cond = next((c for c in conditions if c.name == "puzzled"), compiled.design)
    try:
        for group in _groups(ids, config, seed):
            drawn = draw_selections(config, seed, ("combinations", *group), count * len(group))
            for index, dilemma in enumerate(group):
                compiled.combinations[dilemma] = drawn[index * count:(index + 1) * count]
            for band in compiled.bands if "puzzled" in compiled.formats else ():
                skeleton = generate_skeleton(config, band, seed, ("skeleton", band, *group))
                _instantiate(compiled, skeleton, band, group)
                compiled.skeletons += 1
    except PuzzleError as err:
        errors.add(cond.span, f"cannot generate the puzzles: {err}")
        return None
    return compiled


def _groups(ids: list[str], config: PropositionalConfig, seed: int) -> list[list[str]]:
    """Reuse groups of `reuse.dilemmas`; dilemmas beyond a whole number of groups form one smaller group."""
    whole = len(ids) - len(ids) % config.reuse.dilemmas
    rest = [ids[whole:]] if whole < len(ids) else []
    return reuse_groups(ids[:whole], config, seed, ("reuse",)) + rest


def _instantiate(compiled: CompiledCue, skeleton: Skeleton, band: str, group: list[str]) -> None:
    for dilemma in group:
        for index, selection in enumerate(compiled.combinations[dilemma], start=1):
            compiled.puzzles[(band, dilemma, index)] = instantiate(compiled.puzzle, skeleton, selection)


def assignment(config: PropositionalConfig, selection: Selection) -> dict[str, dict[str, str]]:
    """Person -> attribute -> value: the declared shape filled with one combination."""
    cells = {p: parse_cell(p, symbols, config.attributes) for p, symbols in config.shape.cells.items()}
    return {p: {a: selection[a][cells[p][a]] for a in cells[p]} for p in config.people}


# ---- rendering ---------------------------------------------------------------------
def _check_sample_render(compiled: CompiledCue, errors: ErrorCollector) -> None:
    """Render every template once on the first dilemma, so a misspelt column fails at compile time."""
    dilemma = compiled.dilemmas[0]
    people = _people_context(assignment(compiled.puzzle, _first_selection(compiled.puzzle)))
    for probe in compiled.probes:
        check_render(probe.template, {"dilemma": dilemma, "person": probe.people[0]}, errors)
    sample_puzzle = {"clues": "1. A is a man.", "domain": "", "text": ["A is a man."]}
    for name, template in compiled.formats.items():
        context = {"dilemma": dilemma, "consequences": True, "answers": ["option1", "option2"],
                   "people": people, "person": people[0]["name"], "probe": "?", "puzzle": sample_puzzle}
        check_render(template, {k: context[k] for k in NAMES[name]}, errors)
    if compiled.system is not None:
        check_render(compiled.system, {}, errors)


def _first_selection(config: PropositionalConfig) -> Selection:
    return {a.name: a.values[: a.pick] for a in config.attributes}


def _people_context(people: dict[str, dict[str, str]]) -> list[dict[str, str]]:
    return [{"name": name, **values} for name, values in people.items()]


def _puzzle_context(puzzle: dict[str, Any]) -> dict[str, Any]:
    text = puzzle["text"]
    return {"clues": "\n".join(f"{i}. {line}" for i, line in enumerate(text, start=1)),
            "domain": puzzle["domain_text"], "text": text}


def expand(compiled: CompiledCue) -> Iterator[dict[str, Any]]:
    """Every row of the design, as dicts ready to be serialised (ids not yet attached)."""
    for dilemma in compiled.dilemmas:
        for setting in compiled.settings:
            if "neutral" in compiled.formats:
                yield _neutral(compiled, dilemma, setting)
            for index, selection in enumerate(compiled.combinations[dilemma[compiled.key]], start=1):
                yield from _cued(compiled, dilemma, setting, index, selection)


def _neutral(compiled: CompiledCue, dilemma: Row, setting: str) -> dict[str, Any]:
    tokens = compiled.neutral_tokens
    context = {"dilemma": dilemma, "consequences": setting == "with", "answers": list(tokens)}
    cell = _cell(compiled, "neutral", None, dilemma, None, setting, None, None, {})
    return _row(compiled, compiled.formats["neutral"].render(context), cell, tokens)


def _cued(compiled: CompiledCue, dilemma: Row, setting: str, index: int,
          selection: Selection) -> Iterator[dict[str, Any]]:
    people = assignment(compiled.puzzle, selection)
    base = {"dilemma": dilemma, "consequences": setting == "with", "people": _people_context(people)}
    variants: list[tuple[str, str | None, dict[str, Any] | None]] = []
    if "direct" in compiled.formats:
        variants.append(("direct", None, None))
    if "puzzled" in compiled.formats:
        variants.extend(("puzzled", band, compiled.puzzles[(band, dilemma[compiled.key], index)])
                        for band in compiled.bands)
    for fmt, band, puzzle in variants:
        for probe in compiled.probes:
            for person in probe.people:
                question = probe.template.render({"dilemma": dilemma, "person": person})
                context = {**base, "answers": list(probe.tokens), "person": person, "probe": question}
                if puzzle is not None:
                    context["puzzle"] = _puzzle_context(puzzle)
                cell = _cell(compiled, fmt, band, dilemma, index, setting, probe.name, person, people[person])
                row = _row(compiled, compiled.formats[fmt].render(context), cell, probe.tokens)
                if puzzle is not None:
                    row["puzzle"] = puzzle
                    row["expect"] = {**expect_of(puzzle), "person": person, **people[person]}
                yield row


def _cell(compiled: CompiledCue, fmt: str, band: str | None, dilemma: Row, combination: int | None,
          setting: str, probe: str | None, person: str | None, truth: dict[str, str]) -> dict[str, Any]:
    cell: dict[str, Any] = {"format": fmt, "difficulty": band, "dilemma": dilemma[compiled.key],
                            "combination": combination, "consequences": setting, "probe": probe, "person": person}
    cell.update({a.name: truth.get(a.name) for a in compiled.puzzle.attributes})
    cell[BENEFIT] = dilemma[BENEFIT]
    return cell


def _row(compiled: CompiledCue, user: str, cell: dict[str, Any], tokens: tuple[str, ...]) -> dict[str, Any]:
    system = compiled.system.render({}) if compiled.system is not None else None
    head = [{"role": "system", "content": system}] if system is not None else []
    return {"messages": [*head, {"role": "user", "content": user}], "samples": 1, "cell": cell,
            "answers": {t: t for t in tokens}, "decode": compiled.decode}
