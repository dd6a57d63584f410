"""A spec's `puzzle` block -> PropositionalConfig / ZebraConfig, every problem located at its clause."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, get_args

from jinja2 import TemplateSyntaxError, meta
from pydantic import ValidationError

from spec_audits.compiler import nodes as n
from spec_audits.compiler.errors import ErrorCollector, Span, did_you_mean
from spec_audits.compiler.sandbox import environment
from spec_audits.puzzles import (
    AttributeConfig,
    Band,
    ClueTypeConfig,
    PropositionalConfig,
    PuzzleConfig,
    PuzzleError,
    ReuseConfig,
    ShapeConfig,
    ZebraConfig,
    validate_config,
)
from spec_audits.puzzles.model import PropositionalKind, ZebraKind
from spec_audits.puzzles.presets import PRESETS
from spec_audits.puzzles.render import PHRASING_NAMES

KINDS = ("propositional", "zebra")
CLAUSES = ("kind", "people", "attribute", "shape", "clues", "bands", "reuse", "phrasing", "budget", "minimal",
           "style")
_STYLES = ("articles", "redundancy", "preset")
_ZEBRA_ONLY_NOT = ("shape", "reuse")
# Words of a PuzzleError message -> the clause it is about (first match wins).
_BLAME = (("style", "style"), ("shape", "shape"), ("band", "bands"), ("clue", "clues"), ("phrasing", "phrasing"),
          ("protect", "people"), ("people", "people"), ("attribute", "attribute"), ("domain", "attribute"))


class _BadClause(Exception):
    """A clause whose arguments do not fit; message and hint go to the spec diagnostic."""

    def __init__(self, message: str, hint: str | None = None) -> None:
        super().__init__(message)
        self.hint = hint


def puzzle_config(block: n.PuzzleDef, errors: ErrorCollector, bands: Iterable[str] = ()) -> PuzzleConfig | None:
    """The config a puzzle block declares, validated (and its `bands` proved reachable); None on error."""
    before = len(errors.diagnostics)
    fields: dict[str, Any] = {"name": block.name}
    kind = "propositional"
    for clause in block.clauses:
        try:
            kind = _apply(clause, fields, kind, _kind_of(block))
        except _BadClause as bad:
            errors.add(clause.span, f"puzzle '{block.name}': {bad}", bad.hint)
    if len(errors.diagnostics) > before:
        return None
    config = _build(block, kind, fields, errors)
    if config is None:
        return None
    try:
        validate_config(config, list(bands))
    except PuzzleError as err:
        errors.add(blame(block, str(err)), f"puzzle '{block.name}': {err}", _hint(str(err)))
        return None
    return config


def blame(block: n.PuzzleDef, message: str) -> Span:
    """The clause a puzzle-library message is about, or the block itself."""
    lowered = message.lower()
    for word, keyword in _BLAME:
        clauses = [c for c in block.clauses if c.keyword == keyword]
        if word in lowered and clauses:
            named = [c for c in clauses if f"'{c.args[0]}'" in message]
            return (named or clauses)[0].span
    return block.span


def _hint(message: str) -> str | None:
    if "style" in message:
        return ("style preset released styles the bands easy, intermediate and hard with the eight seed-003 clue "
                "types (spec_audits/puzzles/presets.py); style preset minimal styles none")
    if "band" in message:
        return "bands are matched in order: easy <= 2, intermediate <= 4, hard > 4 (mean clue weight)"
    if "shape" in message:
        return "shape cells use the attribute symbols G1..G<pick>, R1..R<pick>, one per attribute"
    return None


def _build(block: n.PuzzleDef, kind: str, fields: dict[str, Any], errors: ErrorCollector) -> PuzzleConfig | None:
    if kind == "zebra":
        for keyword in _ZEBRA_ONLY_NOT:
            clause = next((c for c in block.clauses if c.keyword == keyword), None)
            if clause is not None:
                errors.add(clause.span, f"puzzle '{block.name}': '{keyword}' does not apply to zebra puzzles")
        if any(c.keyword in _ZEBRA_ONLY_NOT for c in block.clauses):
            return None
        people = fields.pop("people", None)
        if people is not None:
            fields["positions"] = len(people)
    model: type[PropositionalConfig] | type[ZebraConfig] = ZebraConfig if kind == "zebra" else PropositionalConfig
    try:
        return model(**fields)
    except ValidationError as err:
        first = err.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        errors.add(block.span, f"puzzle '{block.name}': {where}: {first['msg']}")
        return None


def _kind_of(block: n.PuzzleDef) -> str:
    """The declared kind (propositional when absent or unknown: the kind clause reports that)."""
    clause = next((c for c in block.clauses if c.keyword == "kind"), None)
    return str(clause.args[0]) if clause is not None and clause.args[0] in KINDS else "propositional"


def _apply(clause: n.PuzzleClause, fields: dict[str, Any], kind: str, declared: str) -> str:
    if clause.keyword == "kind":
        if clause.args[0] not in KINDS:
            raise _BadClause(f"unknown puzzle kind '{clause.args[0]}'", did_you_mean(str(clause.args[0]), KINDS))
        return str(clause.args[0])
    handler = _HANDLERS.get(clause.keyword)
    if handler is None:
        raise _BadClause(f"unknown clause '{clause.keyword}'", did_you_mean(clause.keyword, CLAUSES))
    handler(clause.args, fields, declared)
    return kind


def _people(args: tuple[Any, ...], fields: dict[str, Any], kind: str) -> None:
    fields["people"] = [str(p) for p in args[0]]


def _attribute(args: tuple[Any, ...], fields: dict[str, Any], kind: str) -> None:
    name, values, *pick = args
    count = pick[0] if pick else 2
    if not isinstance(count, int) or count < 1:
        raise _BadClause(f"'pick' needs a whole number >= 1, got {count!r}")
    fields.setdefault("attributes", []).append(
        AttributeConfig(name=str(name), values=[str(v) for v in values], pick=count))


def _shape(args: tuple[Any, ...], fields: dict[str, Any], kind: str) -> None:
    name, *cells = args
    if name == "random":
        if cells:
            raise _BadClause("a random shape takes no cells", "write: shape random")
        fields["shape"] = ShapeConfig(kind="random")
        return
    if not cells:
        if name != "canonical":
            raise _BadClause(f"shape '{name}' declares no cells", "write: shape NAME: A = G1 R1, B = G1 R2, ...")
        fields["shape"] = ShapeConfig.canonical()
        return
    fields["shape"] = ShapeConfig(kind="declared", cells={str(c[0]): [str(s) for s in c[1:]] for c in cells})


def _clues(args: tuple[Any, ...], fields: dict[str, Any], kind: str) -> None:
    kinds = get_args(ZebraKind if kind == "zebra" else PropositionalKind)
    clues: dict[str, ClueTypeConfig] = {}
    for name, weight in args:
        if name not in kinds:
            close = did_you_mean(str(name), kinds)
            listed = f"{kind} clue types: {', '.join(kinds)}"
            raise _BadClause(f"unknown clue type '{name}' for {kind} puzzles",
                             f"{close} {listed}" if close and close.startswith("did you mean") else listed)
        if not isinstance(weight, int | float) or weight <= 0:
            raise _BadClause(f"clue weight of '{name}' must be a number > 0, got {weight!r}")
        clues[str(name)] = ClueTypeConfig(weight=weight)
    fields["clues"] = clues


def _bands(args: tuple[Any, ...], fields: dict[str, Any], kind: str) -> None:
    for name, op, bound in args:
        if op not in ("<=", ">") or not isinstance(bound, int | float):
            raise _BadClause(f"band '{name}' must read '{name} <= NUMBER' or '{name} > NUMBER'")
    fields["bands"] = [Band(name=str(name), op=op, bound=bound) for name, op, bound in args]


def _reuse(args: tuple[Any, ...], fields: dict[str, Any], kind: str) -> None:
    count, unit, *rest = args
    if unit != "dilemmas":
        raise _BadClause(f"reuse counts dilemmas, not '{unit}'", "write: reuse 5 dilemmas with distinct combinations")
    if rest and tuple(rest) != ("distinct", "combinations"):
        raise _BadClause(f"unknown reuse rule 'with {' '.join(map(str, rest))}'",
                         "write: reuse 5 dilemmas with distinct combinations")
    if not isinstance(count, int) or count < 1:
        raise _BadClause(f"reuse needs a whole number of dilemmas >= 1, got {count!r}")
    fields["reuse"] = ReuseConfig(dilemmas=count, distinct_combinations=bool(rest))


def _phrasing(args: tuple[Any, ...], fields: dict[str, Any], kind: str) -> None:
    name, text = args
    _check_phrasing(str(name), str(text))
    if name == "literal":
        fields["literal"] = str(text)
        return
    clues = fields.get("clues")
    if clues is None:
        raise _BadClause(f"phrasing of '{name}' comes before the 'clues' clause", "declare 'clues ...' first")
    if name not in clues:
        raise _BadClause(f"phrasing for undeclared clue type '{name}'", did_you_mean(str(name), [*clues, "literal"]))
    clues[name] = clues[name].model_copy(update={"phrasing": str(text)})


def _check_phrasing(name: str, text: str) -> None:
    """A phrasing renders only when its clue type is drawn, so its names are checked here, statically."""
    try:
        used = meta.find_undeclared_variables(environment().parse(text))
    except TemplateSyntaxError as err:
        raise _BadClause(f"phrasing of '{name}' is not a valid template: {err.message}") from None
    unknown = sorted(used - PHRASING_NAMES)
    if unknown:
        hint = did_you_mean(unknown[0], PHRASING_NAMES) or f"phrasings can use: {', '.join(sorted(PHRASING_NAMES))}"
        raise _BadClause(f"phrasing of '{name}' uses unknown name '{unknown[0]}'", hint)


def _budget(args: tuple[Any, ...], fields: dict[str, Any], kind: str) -> None:
    """`budget N`: attempts (candidate clue sets) per puzzle; work, never time."""
    attempts = args[0]
    if not isinstance(attempts, int) or attempts < 1:
        raise _BadClause(f"budget needs a whole number of attempts >= 1, got {attempts!r}",
                         "a budget counts the candidate clue sets tried per puzzle, e.g. budget 800")
    fields["budget"] = attempts


def _timeout(args: tuple[Any, ...], fields: dict[str, Any], kind: str) -> None:
    """The retired wall-clock limit: read so an old spec gets told what to write instead."""
    default = (ZebraConfig if kind == "zebra" else PropositionalConfig).model_fields["budget"].default
    raise _BadClause("'timeout' is retired: a time limit made whether a spec compiles depend on the machine's load",
                     f"limit the work instead: 'budget N' tries up to N candidate clue sets per puzzle (default "
                     f"{default}); or delete the clause")


def _minimal(args: tuple[Any, ...], fields: dict[str, Any], kind: str) -> None:
    fields["minimal"] = True


def _style(args: tuple[Any, ...], fields: dict[str, Any], kind: str) -> None:
    """`style articles on | off` ("A is a man" / the released "A is man"); `style redundancy N`;
    `style preset released | minimal` (spec_audits/puzzles/presets.py)."""
    name, value = args
    if kind == "zebra":
        raise _BadClause("'style' applies to propositional puzzles only")
    if name == "articles":
        if value not in ("on", "off"):
            raise _BadClause(f"style articles takes on or off, got {value!r}")
        fields["articles"] = value == "on"
    elif name == "redundancy":
        if not isinstance(value, int) or value < 0:
            raise _BadClause(f"style redundancy needs a whole number of clues >= 0, got {value!r}")
        fields["redundancy"] = value
    elif name == "preset":
        if value not in PRESETS:
            raise _BadClause(f"unknown style preset {value!r}", did_you_mean(str(value), PRESETS))
        fields["styles"] = PRESETS[str(value)]
    else:
        raise _BadClause(f"unknown style '{name}'", did_you_mean(str(name), _STYLES))


_HANDLERS: dict[str, Callable[[tuple[Any, ...], dict[str, Any], str], None]] = {
    "people": _people, "attribute": _attribute, "shape": _shape, "clues": _clues, "style": _style,
    "bands": _bands, "reuse": _reuse, "phrasing": _phrasing, "budget": _budget, "timeout": _timeout,
    "minimal": _minimal,
}
