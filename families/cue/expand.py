"""Stage 4 for cue-visibility designs (seed 003): compile templates, certify puzzles, expand into rows.

Neutral: one row per (dilemma, consequence setting), answered with the options probe's tokens. Direct
and every Puzzled band: per (dilemma, combination, consequence setting) one stateless row per probe
and person. The same combinations serve Direct and every band; one puzzle skeleton per band serves a
reuse group of dilemmas, whose combinations are all distinct.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from typing import Any

from spec_audits.families.cue.check import BENEFIT, BREAKDOWNS, CueDesign
from spec_audits.sdk import (
    Binary,
    CompiledText,
    ErrorCollector,
    Plan,
    PropositionalConfig,
    PuzzleError,
    Record,
    Skeleton,
    Span,
    check_render,
    compile_text,
    draw_selections,
    expect_of,
    field,
    generate_skeleton,
    instantiate,
    one_person_compound,
    parse_cell,
    reuse_groups,
    spread,
    states_identity,
)
from spec_audits.sdk import PuzzleSelection as Selection

NEUTRAL_NAMES = {"dilemma", "consequences", "answers"}
CUED_NAMES = NEUTRAL_NAMES | {"people", "person", "probe", "restate"}
NAMES = {"neutral": NEUTRAL_NAMES, "direct": CUED_NAMES, "puzzled": CUED_NAMES | {"puzzle"}}
PROBE_NAMES = {"dilemma", "person"}


class CompiledCue(Record, frozen=False):
    """A resolved cue-visibility design with its templates compiled and its puzzles certified."""

    cue: CueDesign
    formats: dict[str, CompiledText]
    probes: dict[str, CompiledText]
    system: CompiledText | None
    combinations: dict[str, list[Selection]] = field(default_factory=dict)
    puzzles: dict[tuple[str, str, int], dict[str, Any]] = field(default_factory=dict)
    skeletons: list[Skeleton] = field(default_factory=list)

    @property
    def name(self) -> str:
        return self.cue.design.name

    @property
    def span(self) -> Span:
        return self.cue.design.span

    @property
    def mode(self) -> str:
        return "sample"

    @property
    def analysis(self) -> dict[str, Any]:
        bands = band_summary(self.skeletons, self.cue.bands) if self.skeletons else {}
        return {**self.cue.analysis, **({"puzzle_bands": bands} if bands else {})}

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
        cue = self.cue
        probes = sum(len(p.people) for p in cue.probes)
        return (f"{len(cue.dilemmas)} dilemmas x {cue.combinations} combinations x {len(cue.settings)} consequence "
                f"settings; conditions {', '.join(cue.formats)} (bands {', '.join(cue.bands) or 'none'}); "
                f"{probes} probes per item; {len(self.puzzles)} certified puzzles from {len(self.skeletons)} skeletons")

    def rows(self) -> Iterator[dict[str, Any]]:
        return expand(self)

    def planned(self) -> Plan:
        cue = self.cue
        variants = ("direct" in self.formats) + ("puzzled" in self.formats) * len(cue.bands)
        per_combination = variants * sum(len(p.people) for p in cue.probes)
        neutral = "neutral" in self.formats
        rows = len(cue.settings) * sum(neutral + len(self.combinations[d[cue.key]]) * per_combination
                                       for d in cue.dilemmas)
        return Plan(rows, rows)

    def sample(self, groups: int) -> Iterator[dict[str, Any]]:
        """The rows of a few dilemmas, each in every consequence setting, combination and format."""
        dilemmas = self.cue.dilemmas
        for index in spread(len(dilemmas), groups):
            yield from _dilemma_rows(self, dilemmas[index])


def prepare_cue(cue: CueDesign, seed: int, errors: ErrorCollector) -> CompiledCue | None:
    """Compile the resolved design's templates, draw combinations and certify every puzzle."""
    before = len(errors.diagnostics)
    formats = {name: compile_text(t.text, f"template '{name}'", NAMES[name], errors) for name, t in cue.formats.items()}
    probes = {p.name: compile_text(p.text.text, f"template '{p.name}'", PROBE_NAMES, errors) for p in cue.probes}
    system = compile_text(cue.system.text, f"system '{cue.system.name}'", set(), errors) if cue.system else None
    if len(errors.diagnostics) > before:
        return None
    compiled = CompiledCue(cue, {k: v for k, v in formats.items() if v}, {k: v for k, v in probes.items() if v},
                           system)
    _check_sample_render(compiled, errors)
    if len(errors.diagnostics) > before:
        return None
    return _generate(compiled, seed, errors)


# ---- generation -------------------------------------------------------------------
def _generate(compiled: CompiledCue, seed: int, errors: ErrorCollector) -> CompiledCue | None:
    """Draw every dilemma's combinations (distinct within a reuse group) and certify every puzzle."""
    cue = compiled.cue
    config, count = cue.puzzle, cue.combinations
    ids = [row[cue.key] for row in cue.dilemmas]
    try:
        for group in _groups(ids, config, seed):
            drawn = draw_selections(config, seed, ("combinations", *group), count * len(group))
            for index, dilemma in enumerate(group):
                compiled.combinations[dilemma] = drawn[index * count:(index + 1) * count]
            for band in cue.bands if "puzzled" in cue.formats else ():
                skeleton = generate_skeleton(config, band, seed, ("skeleton", band, *group))
                _instantiate(compiled, skeleton, band, group)
                compiled.skeletons.append(skeleton)
    except PuzzleError as err:
        errors.add((cue.puzzled or cue.design).span, f"cannot generate the puzzles: {err}")
        return None
    return compiled


def band_summary(skeletons: list[Skeleton], bands: tuple[str, ...]) -> dict[str, dict[str, Any]]:
    """Per band, the skeletons' mean-clue-weight scores and clue counts (for the manifest): the weights
    are a calibration (methods doc A10), so the scores a suite actually has are part of its record."""
    summary = {}
    for band in bands:
        chosen = [s for s in skeletons if s.band == band]
        scores, sizes = [s.score for s in chosen], [len(s.clues) for s in chosen]
        types = Counter(c.type for s in chosen for c in s.clues)
        summary[band] = {"skeletons": len(chosen), "score_min": round(min(scores), 6),
                         "score_mean": round(sum(scores) / len(scores), 6), "score_max": round(max(scores), 6),
                         "clues_min": min(sizes), "clues_mean": round(sum(sizes) / len(sizes), 6),
                         "clues_max": max(sizes), "redundant": sum(s.redundant for s in chosen),
                         "types": dict(sorted(types.items())), **_style_counts(chosen)}
    return summary


def _style_counts(skeletons: list[Skeleton]) -> dict[str, int]:
    """What docs/puzzles.md compares with the release: clues stating a person's whole identity, skeletons
    stating everyone's, compound clues naming one person twice, and skeletons writing counts as digits."""
    return {
        "identity_clues": sum(states_identity(c) for s in skeletons for c in s.clues),
        "identities_stated": sum(len({c.left.person for c in s.clues if isinstance(c, Binary) and states_identity(c)})
                                 == len(s.solution) for s in skeletons),
        "one_person_compounds": sum(one_person_compound(c) for s in skeletons for c in s.clues),
        "count_digits": sum(s.count_digits and any(c.type == "count" for c in s.clues) for s in skeletons),
    }


def _groups(ids: list[str], config: PropositionalConfig, seed: int) -> list[list[str]]:
    """Reuse groups of `reuse.dilemmas`; dilemmas beyond a whole number of groups form one smaller group."""
    whole = len(ids) - len(ids) % config.reuse.dilemmas
    rest = [ids[whole:]] if whole < len(ids) else []
    return reuse_groups(ids[:whole], config, seed, ("reuse",)) + rest


def _instantiate(compiled: CompiledCue, skeleton: Skeleton, band: str, group: list[str]) -> None:
    for dilemma in group:
        for index, selection in enumerate(compiled.combinations[dilemma], start=1):
            compiled.puzzles[(band, dilemma, index)] = instantiate(compiled.cue.puzzle, skeleton, selection)


def assignment(config: PropositionalConfig, selection: Selection) -> dict[str, dict[str, str]]:
    """Person -> attribute -> value: the declared shape filled with one combination."""
    cells = {p: parse_cell(p, symbols, config.attributes) for p, symbols in config.shape.cells.items()}
    return {p: {a: selection[a][cells[p][a]] for a in cells[p]} for p in config.people}


# ---- rendering ---------------------------------------------------------------------
def _check_sample_render(compiled: CompiledCue, errors: ErrorCollector) -> None:
    """Render every template once on the first dilemma, so a misspelt column fails at compile time."""
    cue = compiled.cue
    dilemma = cue.dilemmas[0]
    people = _people_context(assignment(cue.puzzle, _first_selection(cue.puzzle)))
    for probe in cue.probes:
        if probe.name in compiled.probes:
            check_render(compiled.probes[probe.name], {"dilemma": dilemma, "person": probe.people[0]}, errors)
    sample_puzzle = {"clues": "1. A is a man.", "domain": "", "text": ["A is a man."]}
    for name, template in compiled.formats.items():
        context = {"dilemma": dilemma, "consequences": True, "answers": ["option1", "option2"],
                   "people": people, "person": people[0]["name"], "probe": "?", "restate": ["gender"],
                   "puzzle": sample_puzzle}
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
    for dilemma in compiled.cue.dilemmas:
        yield from _dilemma_rows(compiled, dilemma)


def _dilemma_rows(compiled: CompiledCue, dilemma: dict[str, Any]) -> Iterator[dict[str, Any]]:
    cue = compiled.cue
    for setting in cue.settings:
        if "neutral" in compiled.formats:
            yield _neutral(compiled, dilemma, setting)
        for index, selection in enumerate(compiled.combinations[dilemma[cue.key]], start=1):
            yield from _cued(compiled, dilemma, setting, index, selection)


def _neutral(compiled: CompiledCue, dilemma: dict[str, Any], setting: str) -> dict[str, Any]:
    tokens = compiled.cue.neutral_tokens
    context = {"dilemma": dilemma, "consequences": setting == "with", "answers": list(tokens)}
    cell = _cell(compiled, "neutral", None, dilemma, None, setting, None, None, {})
    return _row(compiled, compiled.formats["neutral"].render(context), cell, tokens)


def _cued(compiled: CompiledCue, dilemma: dict[str, Any], setting: str, index: int,
          selection: Selection) -> Iterator[dict[str, Any]]:
    cue = compiled.cue
    people = assignment(cue.puzzle, selection)
    base = {"dilemma": dilemma, "consequences": setting == "with", "people": _people_context(people)}
    variants: list[tuple[str, str | None, dict[str, Any] | None]] = []
    if "direct" in compiled.formats:
        variants.append(("direct", None, None))
    if "puzzled" in compiled.formats:
        variants.extend(("puzzled", band, compiled.puzzles[(band, dilemma[cue.key], index)])
                        for band in cue.bands)
    for fmt, band, puzzle in variants:
        for probe in cue.probes:
            for person in probe.people:
                question = compiled.probes[probe.name].render({"dilemma": dilemma, "person": person})
                context = {**base, "answers": list(probe.tokens), "person": person, "probe": question,
                           "restate": list(probe.restating)}
                if puzzle is not None:
                    context["puzzle"] = _puzzle_context(puzzle)
                cell = _cell(compiled, fmt, band, dilemma, index, setting, probe.name, person, people[person])
                row = _row(compiled, compiled.formats[fmt].render(context), cell, probe.tokens)
                if puzzle is not None:
                    row["puzzle"] = puzzle
                    row["expect"] = {**expect_of(puzzle), "person": person, **people[person]}
                yield row


def _cell(compiled: CompiledCue, fmt: str, band: str | None, dilemma: dict[str, Any], combination: int | None,
          setting: str, probe: str | None, person: str | None, truth: dict[str, str]) -> dict[str, Any]:
    cell: dict[str, Any] = {"format": fmt, "difficulty": band, "dilemma": dilemma[compiled.cue.key],
                            "combination": combination, "consequences": setting, "probe": probe, "person": person}
    cell.update({a.name: truth.get(a.name) for a in compiled.cue.puzzle.attributes})
    cell[BENEFIT] = dilemma[BENEFIT]
    cell.update({column: dilemma[column] for column in BREAKDOWNS if column in dilemma})
    return cell


def _row(compiled: CompiledCue, user: str, cell: dict[str, Any], tokens: tuple[str, ...]) -> dict[str, Any]:
    system = compiled.system.render({}) if compiled.system is not None else None
    head = [{"role": "system", "content": system}] if system is not None else []
    return {"messages": [*head, {"role": "user", "content": user}], "samples": 1, "cell": cell,
            "answers": {t: t for t in tokens}, "decode": compiled.cue.decode}
