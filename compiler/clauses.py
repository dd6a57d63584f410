"""Design clauses as declarations: a keyword, the shape of its arguments, and the typed value it parses to.

The grammar does not list design clauses: compiler/parse.py adds one rule per declared clause,
`clause_KEYWORD: "KEYWORD" <the shape's grammar>`, and the AST stage hands that rule's children to the
shape, which builds the typed value: each word as spec's Leaf (compiler/leaf.py: its text, terminal kind,
span and typed readings), each building block as its AST node. The shared clauses are declared in
compiler/typed_design.py, every other one by the family that takes it (`Family.syntax`); a family adds a
keyword by declaring it with a shape from this library (or a Shape of its own, written in the grammar's
building blocks), with no edit to the grammar or to shared code. A wrong argument is a syntax error at the
token, from the parser; a word a shape cannot read (`leaf.whole()` of 2.5) is a ShapeError at the word.

Building blocks a shape's grammar may use (compiler/spec.lark): NAME, NUMBER, WORD, STRING, text, value,
value_list, dotted, expr, option, selection, condition, size_axis, axis, probe, answer_spec.
"""

from __future__ import annotations

from dataclasses import FrozenInstanceError
from typing import Any, ClassVar, Generic, Protocol, TypeVar, cast

from spec_audits.base.records import Record
from spec_audits.compiler import nodes as n
from spec_audits.compiler.errors import Span
from spec_audits.compiler.leaf import Leaf as Leaf  # a shape's argument words, `c.Leaf` to a family
from spec_audits.compiler.leaf import ShapeError as ShapeError
from spec_audits.compiler.leaf import plain

T = TypeVar("T")


class HasClauses(Protocol):
    """A design or a block: its clauses by keyword."""

    def get(self, keyword: str) -> n.Clause | None: ...


class Builder(Protocol):
    """What a shape may ask of the AST stage: a name as a reference (`leaf.ref()`), and a whole number that,
    when the spec gives a fraction, is reported and truncated so the rest of the spec is still checked."""

    def ref(self, leaf: Leaf) -> n.Ref: ...

    def whole(self, leaf: Leaf) -> int: ...


class Shape(Generic[T]):
    """An argument shape: its grammar (what follows the keyword) and the typed value it builds."""

    GRAMMAR: ClassVar[str] = ""
    WRITTEN: ClassVar[str] = ""  # how the docs show the arguments, e.g. 'NAME, NAME, ...'

    def grammar(self) -> str:
        return self.GRAMMAR

    def written(self) -> str:
        return self.WRITTEN

    def build(self, at: Builder, span: Span, children: list[Any]) -> T:
        raise NotImplementedError


class Fixed(Shape[T]):
    """A shape without parameters: equal to every shape of its class, hashable and immutable, as a field-less
    frozen dataclass is. The library's are plain classes because a dataclass's six generated methods cost
    its import about 0.5 ms each class, and `spec check` loads all of them."""

    def __eq__(self, other: object) -> bool:
        return True if other.__class__ is self.__class__ else NotImplemented

    def __hash__(self) -> int:
        return hash(())

    def __repr__(self) -> str:
        return f"{type(self).__qualname__}()"

    def __setattr__(self, name: str, value: Any) -> None:
        raise FrozenInstanceError(f"cannot assign to field {name!r}")

    def __delattr__(self, name: str) -> None:
        raise FrozenInstanceError(f"cannot delete field {name!r}")


class Name(Fixed[n.Ref]):
    """`KEYWORD NAME`."""

    GRAMMAR: ClassVar[str] = "NAME"
    WRITTEN: ClassVar[str] = "NAME"

    def build(self, at: Builder, span: Span, children: list[Any]) -> n.Ref:
        return at.ref(children[0])


class Names(Fixed[tuple[n.Ref, ...]]):
    """`KEYWORD a, b, ...`."""

    GRAMMAR: ClassVar[str] = 'NAME ("," NAME)*'
    WRITTEN: ClassVar[str] = "NAME, NAME, ..."

    def build(self, at: Builder, span: Span, children: list[Any]) -> tuple[n.Ref, ...]:
        return tuple(at.ref(leaf) for leaf in children)


class Selection(Fixed[n.Selection]):
    """`KEYWORD *` or `KEYWORD a, b, ...`."""

    GRAMMAR: ClassVar[str] = "selection"
    WRITTEN: ClassVar[str] = "* | NAME, NAME, ..."

    def build(self, at: Builder, span: Span, children: list[Any]) -> n.Selection:
        return cast(n.Selection, children[0])


class Whole(Fixed[int]):
    """`KEYWORD N`, a whole number."""

    GRAMMAR: ClassVar[str] = "NUMBER"
    WRITTEN: ClassVar[str] = "N"

    def build(self, at: Builder, span: Span, children: list[Any]) -> int:
        return at.whole(children[0])


class Number(Fixed[int | float]):
    """`KEYWORD X`, any number."""

    GRAMMAR: ClassVar[str] = "NUMBER"
    WRITTEN: ClassVar[str] = "X"

    def build(self, at: Builder, span: Span, children: list[Any]) -> int | float:
        return cast(Leaf, children[0]).number()


class Text(Fixed[n.Text]):
    """`KEYWORD "text"`."""

    GRAMMAR: ClassVar[str] = "text"
    WRITTEN: ClassVar[str] = '"TEXT"'

    def build(self, at: Builder, span: Span, children: list[Any]) -> n.Text:
        return cast(n.Text, children[0])


class Texts(Fixed[tuple[n.Text, ...]]):
    """`KEYWORD "a", "b", ...`."""

    GRAMMAR: ClassVar[str] = 'text ("," text)*'
    WRITTEN: ClassVar[str] = '"TEXT", "TEXT", ...'

    def build(self, at: Builder, span: Span, children: list[Any]) -> tuple[n.Text, ...]:
        return tuple(cast(n.Text, child) for child in children)


class Values(Fixed[tuple[n.Scalar, ...]]):
    """`KEYWORD v, v, ...`: names, words, numbers or texts."""

    GRAMMAR: ClassVar[str] = "value_list"
    WRITTEN: ClassVar[str] = "VALUE, VALUE, ..."

    def build(self, at: Builder, span: Span, children: list[Any]) -> tuple[n.Scalar, ...]:
        return cast(tuple[n.Scalar, ...], children[0])


class Options(Fixed[tuple[n.Option, ...]]):
    """`KEYWORD key value, key value, ...`."""

    GRAMMAR: ClassVar[str] = 'option ("," option)*'
    WRITTEN: ClassVar[str] = "KEY VALUE, ..."

    def build(self, at: Builder, span: Span, children: list[Any]) -> tuple[n.Option, ...]:
        return tuple(cast(n.Option, child) for child in children)


class Expression(Fixed[n.Expr]):
    """`KEYWORD EXPR`: comparisons of names, numbers and texts joined by and, or, not."""

    GRAMMAR: ClassVar[str] = "expr"
    WRITTEN: ClassVar[str] = "EXPR"

    def build(self, at: Builder, span: Span, children: list[Any]) -> n.Expr:
        return cast(n.Expr, children[0])


class Conditions(Fixed[tuple[n.ConditionRef, ...]]):
    """`KEYWORD toward A, name(arg, key = row.column) shared, ...`."""

    GRAMMAR: ClassVar[str] = 'condition ("," condition)*'
    WRITTEN: ClassVar[str] = "CONDITION, CONDITION, ..."

    def build(self, at: Builder, span: Span, children: list[Any]) -> tuple[n.ConditionRef, ...]:
        return tuple(cast(n.ConditionRef, child) for child in children)


class Answer(Fixed[n.AnswerSpec]):
    """`KEYWORD choice "A" | "B"`, `labels ...`, `options ...`, `yesno`, `scale 1..5`, ..."""

    GRAMMAR: ClassVar[str] = "answer_spec"
    WRITTEN: ClassVar[str] = "ANSWER FORM"

    def build(self, at: Builder, span: Span, children: list[Any]) -> n.AnswerSpec:
        return cast(n.AnswerSpec, children[0])


class Ranges(Fixed[tuple[n.SizeAxis, ...]]):
    """`KEYWORD name in a..b, name in a..b`: axes over whole-number ranges."""

    GRAMMAR: ClassVar[str] = 'size_axis ("," size_axis)*'
    WRITTEN: ClassVar[str] = "NAME in A..B, ..."

    def build(self, at: Builder, span: Span, children: list[Any]) -> tuple[n.SizeAxis, ...]:
        return tuple(cast(n.SizeAxis, child) for child in children)


class Crossing(Fixed[tuple[n.Axis, ...]]):
    """`KEYWORD a x b N x c(v, w)`: axes crossed with `x`, each with a count or values."""

    GRAMMAR: ClassVar[str] = 'axis ("x" axis)*'
    WRITTEN: ClassVar[str] = "AXIS x AXIS x ..."

    def build(self, at: Builder, span: Span, children: list[Any]) -> tuple[n.Axis, ...]:
        return tuple(cast(n.Axis, child) for child in children)


class Probes(Fixed[tuple[n.Probe, ...]]):
    """`KEYWORD name(var in a..b) ANSWER [restating x and y], ...`."""

    GRAMMAR: ClassVar[str] = 'probe ("," probe)*'
    WRITTEN: ClassVar[str] = "NAME(VAR in A..B) ANSWER, ..."

    def build(self, at: Builder, span: Span, children: list[Any]) -> tuple[n.Probe, ...]:
        return tuple(cast(n.Probe, child) for child in children)


class Bands(Fixed[tuple[tuple[str, str, int | float], ...]]):
    """`KEYWORD name >= 0.5, other <= 3`: (name, comparison, number) each."""

    GRAMMAR: ClassVar[str] = 'band ("," band)*'
    WRITTEN: ClassVar[str] = "NAME >= X, ..."

    def build(self, at: Builder, span: Span, children: list[Any]) -> tuple[tuple[str, str, int | float], ...]:
        return tuple(cast(tuple[str, str, int | float], child) for child in children)


class Args(Record, Shape[tuple[Any, ...]]):
    """Any grammar, its arguments kept as plain values (names and texts as strings, numbers as numbers,
    lists as tuples) for a block whose owner reads them itself (the puzzle block)."""

    grammar_text: str = ""
    written_text: str = ""

    def grammar(self) -> str:
        return self.grammar_text

    def written(self) -> str:
        return self.written_text

    def build(self, at: Builder, span: Span, children: list[Any]) -> tuple[Any, ...]:
        return tuple(plain(child) for child in children)


class Counted(Record, Shape[tuple[int, int | None]]):
    """`KEYWORD N [WORDS...] [seed S]`: a count, then fixed words (e.g. `per cell`), then a seed:
    (count, seed or None)."""

    words: tuple[str, ...] = ()

    def grammar(self) -> str:
        return " ".join(["NUMBER", *(f'"{word}"' for word in self.words), '("seed" NUMBER)?'])

    def written(self) -> str:
        return " ".join(["N", *self.words, "[seed S]"])

    def build(self, at: Builder, span: Span, children: list[Any]) -> tuple[int, int | None]:
        return (at.whole(children[0]), at.whole(children[1]) if len(children) > 1 else None)


class NameThen(Record, Shape[tuple[n.Ref, n.Ref | None]]):
    """`KEYWORD NAME [WORD NAME]`, e.g. `protocol authors extract TEMPLATE`: (name, the second or None)."""

    word: str

    def grammar(self) -> str:
        return f'NAME ("{self.word}" NAME)?'

    def written(self) -> str:
        return f"NAME [{self.word} NAME]"

    def build(self, at: Builder, span: Span, children: list[Any]) -> tuple[n.Ref, n.Ref | None]:
        return (at.ref(children[0]), at.ref(children[1]) if len(children) > 1 else None)


class NumberThenNames(Record, Shape[tuple[int | float, tuple[n.Ref, ...]]]):
    """`KEYWORD X [WORD a, b, ...]`, e.g. `reverse 0.5 by unit, arm`: (number, the names)."""

    word: str

    def grammar(self) -> str:
        return f'NUMBER ("{self.word}" NAME ("," NAME)*)?'

    def written(self) -> str:
        return f"X [{self.word} NAME, ...]"

    def build(self, at: Builder, span: Span, children: list[Any]) -> tuple[int | float, tuple[n.Ref, ...]]:
        return (cast(Leaf, children[0]).number(), tuple(at.ref(leaf) for leaf in children[1:]))


class NameOptions(Fixed[tuple[n.Ref, tuple[n.Option, ...]]]):
    """`KEYWORD NAME [key value, ...]`, e.g. `analysis influence_pairs alpha 0.05`: (name, options)."""

    GRAMMAR: ClassVar[str] = 'NAME (option ("," option)*)?'
    WRITTEN: ClassVar[str] = "NAME [KEY VALUE, ...]"

    def build(self, at: Builder, span: Span, children: list[Any]) -> tuple[n.Ref, tuple[n.Option, ...]]:
        return (at.ref(children[0]), tuple(cast(n.Option, child) for child in children[1:]))


class ClauseSpec(Record, Generic[T]):
    """One clause: its keyword, its argument shape, what it is for (the docs' words), and the block it
    belongs to: a design (the default) or a top-level block `BLOCK NAME: clause...` (puzzle, generator,
    or one a family declares)."""

    keyword: str
    shape: Shape[T]
    summary: str = ""
    block: str = "design"

    def __post_init__(self) -> None:
        for word in (self.keyword, self.block):
            if not word.isidentifier() or not word.islower() or "__" in word:
                raise ValueError(f"a clause keyword or block is a lower-case name, not {word!r}")

    def value(self, holder: HasClauses) -> T | None:
        """The clause's typed value in a design or block, or None when it does not give the clause."""
        clause = holder.get(self.keyword)
        return None if clause is None else cast(T, clause.value)

    def build(self, at: Builder, span: Span, children: list[Any]) -> n.Clause:
        return n.Clause(span=span, keyword=self.keyword, value=self.shape.build(at, span, children))


Syntax = tuple[ClauseSpec[Any], ...]
"""Every design clause the parser knows: the shared ones and every registered family's."""


def clause_rules(syntax: Syntax) -> str:
    """The grammar rules of the declared clauses and blocks, appended to compiler/spec.lark by the parser:
    `clause_KEYWORD` for a design clause, `block_BLOCK` and `bclause_BLOCK__KEYWORD` for a block's."""
    specs = {(spec.block, spec.keyword): spec for spec in syntax}
    blocks = sorted({block for block, _ in specs if block != "design"})
    assert blocks, "the puzzle block is always declared (spec_audits/puzzles/syntax.py)"
    lines = [_alternatives("?design_clause", [f"clause_{k}" for b, k in sorted(specs) if b == "design"]),
             _alternatives("?owned_block", [f"block_{block}" for block in blocks])]
    for (block, keyword), spec in sorted(specs.items()):
        rule = f"clause_{keyword}" if block == "design" else f"bclause_{block}__{keyword}"
        lines.append(f'{rule}: "{keyword}" {spec.shape.grammar()}')
    for block in blocks:
        lines.append(f'block_{block}: "{block}" NAME ":" bclauses_{block}+')
        own = [f"bclause_{block}__{keyword}" for b, keyword in sorted(specs) if b == block]
        lines.append(_alternatives(f"?bclauses_{block}", own))
    return "\n".join(lines) + "\n"


def _alternatives(rule: str, names: list[str]) -> str:
    return f"{rule}: " + "\n    | ".join(names)


def conflicts(syntax: Syntax) -> list[str]:
    """Clauses declared twice with different shapes (the same shape twice is one clause): `keyword`, or
    `block keyword` for a block's clause."""
    shapes: dict[str, str] = {}
    bad = []
    for spec in syntax:
        name = spec.keyword if spec.block == "design" else f"{spec.block} {spec.keyword}"
        known = shapes.setdefault(name, spec.shape.grammar())
        if known != spec.shape.grammar() and name not in bad:
            bad.append(name)
    return bad
