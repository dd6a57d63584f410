"""Stages 3 and 4 for puzzle-solving designs: the puzzle block and prompt resolved, `count N per band`
puzzles certified per band of the puzzle (propositional or zebra alike), one row each, answered by the
puzzle's solution.

    design solve_logic:
      answer solution logic        # the puzzle block whose puzzles are asked
      count 10 per band seed 3     # certified puzzles per difficulty band
      prompt solve                 # sees `puzzle` (people, domain, domain_text, text), `band`, `format`
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from spec_audits.families.puzzle_solving.clauses import COUNT
from spec_audits.sdk import (
    SOLUTION_FORMAT,
    SOLUTION_OUTCOMES,
    CompiledText,
    DesignContext,
    ErrorCollector,
    Plan,
    PropositionalConfig,
    PuzzleConfig,
    PuzzleError,
    Record,
    Span,
    TypedDesign,
    check_render,
    compile_text,
    draw_selections,
    expect_of,
    field,
    generate_puzzle,
    generate_zebra,
    puzzle_config,
    spread,
)
from spec_audits.sdk import nodes as n

CLAUSES = ("answer", "count", "prompt", "decode", "samples", "analysis")
NAMES = {"puzzle", "band", "format"}  # what the prompt template sees
PROMPT_FIELDS = ("family", "people", "domain", "domain_text", "text")  # of the puzzle, as the prompt sees it


class Resolved(Record):
    design: TypedDesign
    block: n.PuzzleDef
    config: PuzzleConfig
    count: int
    seed: int | None
    prompt: n.TemplateDef


class CompiledSolving(Record, frozen=False):
    resolved: Resolved
    puzzles: list[dict[str, Any]]
    prompt: CompiledText
    name: str
    span: Span
    mode: str = "sample"
    balance_keys: tuple[str, ...] = ("family", "band")
    analysis: dict[str, Any] = field(default_factory=lambda: {"family": "puzzle_solving"})
    shared: dict[str, str] = field(default_factory=dict)
    served: dict[str, list[Any]] = field(default_factory=dict)

    def summary(self) -> str:
        config = self.resolved.config
        return (f"{self.resolved.count} {config.family} puzzles per band, bands "
                f"{', '.join(b.name for b in config.bands)}")

    def planned(self) -> Plan:
        return Plan(rows=len(self.puzzles), trials=len(self.puzzles) * self._samples())

    def sample(self, groups: int) -> Iterator[dict[str, Any]]:
        """The rows of `groups` puzzles spread over the bands (a group is one puzzle)."""
        return self.rows(spread(len(self.puzzles), groups))

    def _samples(self) -> int:
        samples = self.resolved.design.samples
        return samples.count if samples is not None else 1

    def rows(self, only: list[int] | None = None) -> Iterator[dict[str, Any]]:
        design = self.resolved.design
        samples = self._samples()
        for index in range(len(self.puzzles)) if only is None else only:
            puzzle = self.puzzles[index]
            band = puzzle["difficulty"]["band"]
            shown = {key: puzzle[key] for key in PROMPT_FIELDS}
            prompt = self.prompt.render({"puzzle": shown, "band": band, "format": SOLUTION_FORMAT})
            yield {"messages": [{"role": "user", "content": prompt}], "samples": samples,
                   "cell": {"puzzle": self.resolved.block.name, "family": puzzle["family"], "band": band,
                            "index": index},
                   "answers": {outcome: outcome for outcome in SOLUTION_OUTCOMES}, "answer_form": "solution",
                   "decode": design.decode, "puzzle": puzzle, "expect": expect_of(puzzle)}


def resolve(design: TypedDesign, context: DesignContext, errors: ErrorCollector) -> Resolved | None:
    """The design's puzzle, count and prompt, each problem at its clause."""
    answer, count, prompt = design.answer, design.get(COUNT), design.prompt
    for value, clause, hint in ((answer, "answer", "add: answer solution PUZZLE"),
                                (count, "count", "add: count 10 per band"), (prompt, "prompt", "add: prompt NAME")):
        if value is None:
            errors.add(design.span, f"puzzle-solving design '{design.name}' has no '{clause}' clause", hint)
    if answer is None or count is None or prompt is None or answer.puzzle is None:
        return None
    block = context.tables.lookup(context.tables.puzzles, answer.puzzle, "puzzle", errors)
    text = context.tables.lookup(context.tables.texts, prompt, "template", errors)
    at = design.clause(COUNT.keyword)
    if count[0] < 1 and at is not None:
        errors.add(at.span, f"count must be a whole number >= 1, got {count[0]}")
    if block is None or text is None or errors.diagnostics:
        return None
    config = puzzle_config(block, errors)
    if config is None:
        return None
    return Resolved(design, block, config, count[0], count[1], text)


def prepare(resolved: Resolved, seed: int, errors: ErrorCollector) -> CompiledSolving | None:
    """The prompt compiled and every puzzle made and certified (a band that cannot be reached is an error at
    the puzzle block)."""
    design = resolved.design
    prompt = compile_text(resolved.prompt.text, f"template '{resolved.prompt.name}'", NAMES, errors)
    if prompt is None:
        return None
    try:
        puzzles = _puzzles(resolved, seed if resolved.seed is None else resolved.seed)
    except PuzzleError as err:
        errors.add(resolved.block.span, f"puzzle '{resolved.block.name}': {err}")
        return None
    sample = puzzles[0]
    context = {"puzzle": {key: sample[key] for key in PROMPT_FIELDS}, "band": "easy", "format": SOLUTION_FORMAT}
    if check_render(prompt, context, errors) is None:
        return None
    return CompiledSolving(resolved, puzzles, prompt, design.name, design.span)


def _puzzles(resolved: Resolved, seed: int) -> list[dict[str, Any]]:
    config, name = resolved.config, resolved.design.name
    out = []
    for band in (b.name for b in config.bands):
        if isinstance(config, PropositionalConfig):
            selections = draw_selections(config, seed, (name, band), resolved.count)
            out += [generate_puzzle(config, band, seed, (name, band, k), selection)
                    for k, selection in enumerate(selections)]
        else:
            out += [generate_zebra(config, band, seed, (name, band, k)) for k in range(resolved.count)]
    return out
