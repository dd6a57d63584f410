"""Design clauses as declarations: a keyword, the shape of its arguments, and the typed value it parses to.

The grammar does not list design clauses: compiler/parse.py adds one rule per declared clause,
`clause_KEYWORD: "KEYWORD" <the shape's grammar>`, and the AST stage hands that rule's children to the
shape, which builds the typed value. The shared clauses are declared in compiler/typed_design.py, every
other one by the family that takes it (`Family.syntax`); a family adds a keyword by declaring it with
a shape from this library (or a Shape of its own, written in the grammar's building blocks), with no
edit to the grammar or to shared code. A wrong argument is a syntax error at the token, from the parser.

Building blocks a shape's grammar may use (compiler/spec.lark): NAME, NUMBER, text, value, value_list,
dotted, expr, option, selection, condition, size_axis, axis, probe, answer_spec.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar, Generic, Protocol, TypeVar, cast

from lark import Token

from spec_audits.compiler import nodes as n
from spec_audits.compiler.ast_values import number
from spec_audits.compiler.errors import Span

T = TypeVar("T")


class Builder(Protocol):
    """What a shape may ask of the AST stage: spans, names and whole numbers of parse-tree tokens."""

    def ref(self, token: Token) -> n.Ref: ...

    def whole(self, token: Token) -> int: ...


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


@dataclass(frozen=True)
class Name(Shape[n.Ref]):
    """`KEYWORD NAME`."""

    GRAMMAR: ClassVar[str] = "NAME"
    WRITTEN: ClassVar[str] = "NAME"

    def build(self, at: Builder, span: Span, children: list[Any]) -> n.Ref:
        return at.ref(children[0])


@dataclass(frozen=True)
class Names(Shape[tuple[n.Ref, ...]]):
    """`KEYWORD a, b, ...`."""

    GRAMMAR: ClassVar[str] = 'NAME ("," NAME)*'
    WRITTEN: ClassVar[str] = "NAME, NAME, ..."

    def build(self, at: Builder, span: Span, children: list[Any]) -> tuple[n.Ref, ...]:
        return tuple(at.ref(token) for token in children)


@dataclass(frozen=True)
class Selection(Shape[n.Selection]):
    """`KEYWORD *` or `KEYWORD a, b, ...`."""

    GRAMMAR: ClassVar[str] = "selection"
    WRITTEN: ClassVar[str] = "* | NAME, NAME, ..."

    def build(self, at: Builder, span: Span, children: list[Any]) -> n.Selection:
        return cast(n.Selection, children[0])


@dataclass(frozen=True)
class Whole(Shape[int]):
    """`KEYWORD N`, a whole number."""

    GRAMMAR: ClassVar[str] = "NUMBER"
    WRITTEN: ClassVar[str] = "N"

    def build(self, at: Builder, span: Span, children: list[Any]) -> int:
        return at.whole(children[0])


@dataclass(frozen=True)
class Number(Shape[int | float]):
    """`KEYWORD X`, any number."""

    GRAMMAR: ClassVar[str] = "NUMBER"
    WRITTEN: ClassVar[str] = "X"

    def build(self, at: Builder, span: Span, children: list[Any]) -> int | float:
        return number(children[0])


@dataclass(frozen=True)
class Texts(Shape[tuple[n.Text, ...]]):
    """`KEYWORD "a", "b", ...`."""

    GRAMMAR: ClassVar[str] = 'text ("," text)*'
    WRITTEN: ClassVar[str] = '"TEXT", "TEXT", ...'

    def build(self, at: Builder, span: Span, children: list[Any]) -> tuple[n.Text, ...]:
        return tuple(cast(n.Text, child) for child in children)


@dataclass(frozen=True)
class Values(Shape[tuple[n.Scalar, ...]]):
    """`KEYWORD v, v, ...`: names, words, numbers or texts."""

    GRAMMAR: ClassVar[str] = "value_list"
    WRITTEN: ClassVar[str] = "VALUE, VALUE, ..."

    def build(self, at: Builder, span: Span, children: list[Any]) -> tuple[n.Scalar, ...]:
        return cast(tuple[n.Scalar, ...], children[0])


@dataclass(frozen=True)
class Options(Shape[tuple[n.Option, ...]]):
    """`KEYWORD key value, key value, ...`."""

    GRAMMAR: ClassVar[str] = 'option ("," option)*'
    WRITTEN: ClassVar[str] = "KEY VALUE, ..."

    def build(self, at: Builder, span: Span, children: list[Any]) -> tuple[n.Option, ...]:
        return tuple(cast(n.Option, child) for child in children)


@dataclass(frozen=True)
class Expression(Shape[n.Expr]):
    """`KEYWORD EXPR`: comparisons of names, numbers and texts joined by and, or, not."""

    GRAMMAR: ClassVar[str] = "expr"
    WRITTEN: ClassVar[str] = "EXPR"

    def build(self, at: Builder, span: Span, children: list[Any]) -> n.Expr:
        return cast(n.Expr, children[0])


@dataclass(frozen=True)
class Conditions(Shape[tuple[n.ConditionRef, ...]]):
    """`KEYWORD toward A, name(arg, key = row.column) shared, ...`."""

    GRAMMAR: ClassVar[str] = 'condition ("," condition)*'
    WRITTEN: ClassVar[str] = "CONDITION, CONDITION, ..."

    def build(self, at: Builder, span: Span, children: list[Any]) -> tuple[n.ConditionRef, ...]:
        return tuple(cast(n.ConditionRef, child) for child in children)


@dataclass(frozen=True)
class Answer(Shape[n.AnswerSpec]):
    """`KEYWORD choice "A" | "B"`, `labels ...`, `options ...`, `yesno`, `scale 1..5`, ..."""

    GRAMMAR: ClassVar[str] = "answer_spec"
    WRITTEN: ClassVar[str] = "ANSWER FORM"

    def build(self, at: Builder, span: Span, children: list[Any]) -> n.AnswerSpec:
        return cast(n.AnswerSpec, children[0])


@dataclass(frozen=True)
class Ranges(Shape[tuple[n.SizeAxis, ...]]):
    """`KEYWORD name in a..b, name in a..b`: axes over whole-number ranges."""

    GRAMMAR: ClassVar[str] = 'size_axis ("," size_axis)*'
    WRITTEN: ClassVar[str] = "NAME in A..B, ..."

    def build(self, at: Builder, span: Span, children: list[Any]) -> tuple[n.SizeAxis, ...]:
        return tuple(cast(n.SizeAxis, child) for child in children)


@dataclass(frozen=True)
class Crossing(Shape[tuple[n.Axis, ...]]):
    """`KEYWORD a x b N x c(v, w)`: axes crossed with `x`, each with a count or values."""

    GRAMMAR: ClassVar[str] = 'axis ("x" axis)*'
    WRITTEN: ClassVar[str] = "AXIS x AXIS x ..."

    def build(self, at: Builder, span: Span, children: list[Any]) -> tuple[n.Axis, ...]:
        return tuple(cast(n.Axis, child) for child in children)


@dataclass(frozen=True)
class Probes(Shape[tuple[n.Probe, ...]]):
    """`KEYWORD name(var in a..b) ANSWER [restating x and y], ...`."""

    GRAMMAR: ClassVar[str] = 'probe ("," probe)*'
    WRITTEN: ClassVar[str] = "NAME(VAR in A..B) ANSWER, ..."

    def build(self, at: Builder, span: Span, children: list[Any]) -> tuple[n.Probe, ...]:
        return tuple(cast(n.Probe, child) for child in children)


@dataclass(frozen=True)
class Counted(Shape[tuple[int, int | None]]):
    """`KEYWORD N [WORDS...] [seed S]`: a count, then fixed words (e.g. `per cell`), then a seed:
    (count, seed or None)."""

    words: tuple[str, ...] = ()

    def grammar(self) -> str:
        return " ".join(["NUMBER", *(f'"{word}"' for word in self.words), '("seed" NUMBER)?'])

    def written(self) -> str:
        return " ".join(["N", *self.words, "[seed S]"])

    def build(self, at: Builder, span: Span, children: list[Any]) -> tuple[int, int | None]:
        return (at.whole(children[0]), at.whole(children[1]) if len(children) > 1 else None)


@dataclass(frozen=True)
class NameThen(Shape[tuple[n.Ref, n.Ref | None]]):
    """`KEYWORD NAME [WORD NAME]`, e.g. `protocol authors extract TEMPLATE`: (name, the second or None)."""

    word: str

    def grammar(self) -> str:
        return f'NAME ("{self.word}" NAME)?'

    def written(self) -> str:
        return f"NAME [{self.word} NAME]"

    def build(self, at: Builder, span: Span, children: list[Any]) -> tuple[n.Ref, n.Ref | None]:
        return (at.ref(children[0]), at.ref(children[1]) if len(children) > 1 else None)


@dataclass(frozen=True)
class NumberThenNames(Shape[tuple[int | float, tuple[n.Ref, ...]]]):
    """`KEYWORD X [WORD a, b, ...]`, e.g. `reverse 0.5 by unit, arm`: (number, the names)."""

    word: str

    def grammar(self) -> str:
        return f'NUMBER ("{self.word}" NAME ("," NAME)*)?'

    def written(self) -> str:
        return f"X [{self.word} NAME, ...]"

    def build(self, at: Builder, span: Span, children: list[Any]) -> tuple[int | float, tuple[n.Ref, ...]]:
        return (number(children[0]), tuple(at.ref(token) for token in children[1:]))


@dataclass(frozen=True)
class NameOptions(Shape[tuple[n.Ref, tuple[n.Option, ...]]]):
    """`KEYWORD NAME [key value, ...]`, e.g. `analysis influence_pairs alpha 0.05`: (name, options)."""

    GRAMMAR: ClassVar[str] = 'NAME (option ("," option)*)?'
    WRITTEN: ClassVar[str] = "NAME [KEY VALUE, ...]"

    def build(self, at: Builder, span: Span, children: list[Any]) -> tuple[n.Ref, tuple[n.Option, ...]]:
        return (at.ref(children[0]), tuple(cast(n.Option, child) for child in children[1:]))


@dataclass(frozen=True)
class ClauseSpec(Generic[T]):
    """One design clause: its keyword, its argument shape, and what it is for (the docs' words)."""

    keyword: str
    shape: Shape[T]
    summary: str = ""

    def __post_init__(self) -> None:
        if not self.keyword.isidentifier() or not self.keyword.islower():
            raise ValueError(f"a clause keyword is a lower-case name, not {self.keyword!r}")

    def value(self, design: n.Design) -> T | None:
        """The clause's typed value in `design`, or None when the design does not give it."""
        clause = design.get(self.keyword)
        return None if clause is None else cast(T, clause.value)

    def build(self, at: Builder, span: Span, children: list[Any]) -> n.Clause:
        return n.Clause(span=span, keyword=self.keyword, value=self.shape.build(at, span, children))


Syntax = tuple[ClauseSpec[Any], ...]
"""Every design clause the parser knows: the shared ones and every registered family's."""


def clause_rules(syntax: Syntax) -> str:
    """The grammar rules of the declared clauses, appended to compiler/spec.lark by the parser."""
    ordered = sorted({spec.keyword: spec for spec in syntax}.values(), key=lambda spec: spec.keyword)
    lines = ["?design_clause: " + "\n              | ".join(f"clause_{spec.keyword}" for spec in ordered)]
    lines.extend(f'clause_{spec.keyword}: "{spec.keyword}" {spec.shape.grammar()}' for spec in ordered)
    return "\n".join(lines) + "\n"


def conflicts(syntax: Syntax) -> list[str]:
    """Keywords declared twice with different shapes (the same shape twice is one clause)."""
    shapes: dict[str, str] = {}
    bad = []
    for spec in syntax:
        known = shapes.setdefault(spec.keyword, spec.shape.grammar())
        if known != spec.shape.grammar() and spec.keyword not in bad:
            bad.append(spec.keyword)
    return bad

