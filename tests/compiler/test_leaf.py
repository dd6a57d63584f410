"""Issue 33 item 1: a clause's shape receives spec's own Leaf, never the parser's token: each word with its
terminal kind, its span and typed readings, and a reading that does not fit the word is an error at the word
(the clause left out), not a traceback."""

from __future__ import annotations

import pickle
from dataclasses import dataclass
from typing import Any

import pytest
from lark import Token

from spec_audits.compiler import clauses as c
from spec_audits.compiler import nodes as n
from spec_audits.compiler.errors import Diagnostic, ErrorCollector, Span
from spec_audits.compiler.leaf import Leaf, ShapeError
from spec_audits.compiler.recover import parse_spec_text
from spec_audits.compiler.tree_to_ast import build_spec
from spec_audits.compiler.typed_design import SHARED
from spec_audits.puzzles.syntax import SYNTAX as PUZZLE_SYNTAX

FILE = "leaf.spec"
SEEN: list[list[Any]] = []


@dataclass(frozen=True)
class Spy(c.Shape[tuple[Any, ...]]):
    """Keeps what its build receives."""

    grammar_text: str

    def grammar(self) -> str:
        return self.grammar_text

    def build(self, at: c.Builder, span: Span, children: list[Any]) -> tuple[Any, ...]:
        SEEN.append(children)
        return tuple(children)


@dataclass(frozen=True)
class Reads(c.Shape[Any]):
    """`KEYWORD WORD`, read with one of the Leaf's typed readings."""

    reading: str
    word: str = "value"

    def grammar(self) -> str:
        return self.word

    def build(self, at: c.Builder, span: Span, children: list[Any]) -> Any:
        return getattr(children[0], self.reading)()


SPY = c.ClauseSpec("spy", Spy('NAME NUMBER STRING WORD ("seed" NUMBER)?'))
READS = tuple(c.ClauseSpec(f"read_{reading}", Reads(reading)) for reading in ("number", "whole", "text", "ref"))
LONG = c.ClauseSpec("read_long", Reads("text", "LONG_STRING"))  # (`value` makes a quoted text an n.Text)
SYNTAX: c.Syntax = (*SHARED, *PUZZLE_SYNTAX, SPY, *READS, LONG)


def _design(body: str) -> tuple[n.Design, list[Diagnostic]]:
    errors = ErrorCollector()
    spec = build_spec(parse_spec_text(f"design d:\n{body}", FILE, SYNTAX).tree, FILE, errors, SYNTAX)
    return spec.designs[0], errors.diagnostics


def test_a_shape_receives_leaves_with_their_kind_span_and_typed_value() -> None:
    SEEN.clear()
    design, errors = _design('  spy alpha -2.5 "say \\"hi\\"\\tnow" big-word seed 7\n')
    assert errors == [] and len(SEEN) == 1
    name, number, text, word, seed = SEEN[0]
    assert all(type(leaf) is Leaf and not isinstance(leaf, Token) for leaf in SEEN[0])
    assert [leaf.kind for leaf in SEEN[0]] == ["NAME", "NUMBER", "STRING", "WORD", "NUMBER"]
    assert [leaf.span for leaf in SEEN[0]] == [Span(FILE, 2, 7, 2, 12), Span(FILE, 2, 13, 2, 17),
                                               Span(FILE, 2, 18, 2, 35), Span(FILE, 2, 36, 2, 44),
                                               Span(FILE, 2, 50, 2, 51)]
    assert (name.line, name.column) == (2, 7)
    assert name.ref() == n.Ref(span=Span(FILE, 2, 7, 2, 12), name="alpha")
    assert (number.number(), seed.whole(), text.text()) == (-2.5, 7, 'say "hi"\tnow')
    assert (text, word) == ('"say \\"hi\\"\\tnow"', "big-word")  # a Leaf is its text as written
    assert design.get("spy") is not None and design.get("spy").value == tuple(SEEN[0])  # type: ignore[union-attr]


NUMBER_HINT = "write a number, e.g. 3 or 0.5"


@pytest.mark.parametrize(("clause", "message", "hint"), [
    ("read_number abc", "expected a number here, got abc", NUMBER_HINT),
    ("read_whole 2.5", "expected a whole number here, got 2.5", None),  # as the Builder's whole says it
    ("read_whole abc", "expected a number here, got abc", NUMBER_HINT),
    ("read_text abc", "expected a quoted text here, got abc", 'write it in quotes: "..."'),
    ("read_ref 12", "expected a name here, got 12", "write a name: a letter or _, then letters, digits or _"),
])
def test_a_reading_that_does_not_fit_is_an_error_at_the_word_and_the_clause_is_left_out(clause: str, message: str,
                                                                                         hint: str | None) -> None:
    design, errors = _design(f"  {clause}\n  mode sample\n")
    keyword = clause.partition(" ")[0]
    assert errors == [Diagnostic(Span(FILE, 2, 4 + len(keyword), 2, 3 + len(clause)), message, hint)]
    assert design.get(keyword) is None and design.get("mode") is not None  # the rest of the design is kept


@pytest.mark.parametrize(("clause", "value"), [
    ("read_number 3", 3),
    ("read_number 0.25", 0.25),
    ("read_whole -4", -4),
    ('read_long """\n    two\n    lines\n  """', "two\nlines"),
    ("read_ref x", "x"),
])
def test_each_reading_gives_its_typed_value(clause: str, value: Any) -> None:
    design, errors = _design(f"  {clause}\n")
    got = design.get(clause.partition(" ")[0]).value  # type: ignore[union-attr]
    plain = got.name if isinstance(got, n.Ref) else got
    assert errors == [] and plain == value and type(plain) is type(value)


def test_the_builders_whole_reports_a_fraction_and_keeps_checking() -> None:
    """`at.whole` (the shape library's Whole, Counted, ...) reports a fraction and truncates it, as before."""
    whole = c.ClauseSpec("count", c.Whole())
    syntax: c.Syntax = (*SHARED, *PUZZLE_SYNTAX, whole)
    errors = ErrorCollector()
    spec = build_spec(parse_spec_text("design d:\n  count 3.7\n", FILE, syntax).tree, FILE, errors, syntax)
    assert whole.value(spec.designs[0]) == 3
    assert errors.diagnostics == [Diagnostic(Span(FILE, 2, 9, 2, 12), "expected a whole number here, got 3.7")]


def test_a_leaf_survives_a_copy_and_a_shape_error_carries_its_place() -> None:
    leaf = Leaf("12", "NUMBER", Span(FILE, 3, 4, 3, 6))
    copied = pickle.loads(pickle.dumps(leaf))
    assert (copied, copied.kind, copied.span, type(copied)) == ("12", "NUMBER", leaf.span, Leaf)
    with pytest.raises(ShapeError) as raised:
        leaf.text()
    assert (raised.value.span, raised.value.message) == (leaf.span, "expected a quoted text here, got 12")
