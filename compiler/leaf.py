"""A word of the spec as a clause's shape receives it: spec's own Leaf, never the parser's token.

The AST stage turns each parse-tree token into a Leaf where it hands a declared clause's arguments to the
clause's shape (compiler/ast_designs.py), so no shape, family or plug-in sees the parser library. A Leaf is a
str (its text as written, so a shape that compares or prints it keeps working) with the grammar terminal it
matched (`kind`: NAME, NUMBER, WORD, STRING, LONG_STRING, COMP_OP, ... as compiler/spec.lark names them),
where it sits (`span`), and typed readings (`number()`, `whole()`, `text()`, `ref()`). A reading that does
not fit the leaf raises a ShapeError at the leaf, which the AST stage reports (file:line:column) and leaves
the clause out: a located error, not a traceback.
"""

from __future__ import annotations

import re
import textwrap
from typing import Any

from spec_audits.compiler import nodes as n
from spec_audits.compiler.errors import Span

_ESCAPE = re.compile(r'\\(["\\nt])')
_ESCAPES = {'"': '"', "\\": "\\", "n": "\n", "t": "\t"}
TEXTS = ("STRING", "LONG_STRING")
"""The kinds of a quoted text: "..." and \"\"\"...\"\"\"."""


class ShapeError(Exception):
    """An argument a shape cannot build from: reported at `span` (with `hint`), and the clause left out."""

    def __init__(self, span: Span, message: str, hint: str | None = None) -> None:
        super().__init__(message)
        self.span, self.message, self.hint = span, message, hint


class Leaf(str):
    """One word of a clause's arguments: its text, the terminal it matched (`kind`) and its `span`."""

    __slots__ = ("kind", "span")
    kind: str
    span: Span

    def __new__(cls, text: str, kind: str, span: Span) -> Leaf:
        leaf = super().__new__(cls, text)
        leaf.kind, leaf.span = kind, span
        return leaf

    def __reduce__(self) -> tuple[type[Leaf], tuple[str, str, Span]]:
        return (Leaf, (str(self), self.kind, self.span))

    @property
    def line(self) -> int:
        return self.span.line

    @property
    def column(self) -> int:
        return self.span.column

    def number(self) -> int | float:
        """A NUMBER as written: an int, or a float when it has a decimal point."""
        if self.kind != "NUMBER":
            raise ShapeError(self.span, f"expected a number here, got {self}", "write a number, e.g. 3 or 0.5")
        return parse_number(self)

    def whole(self) -> int:
        """A NUMBER that must be a whole number."""
        value = self.number()
        if isinstance(value, float):
            raise ShapeError(self.span, f"expected a whole number here, got {self}")
        return value

    def text(self) -> str:
        """A quoted text (STRING or LONG_STRING), its quotes taken off and its escapes read."""
        if self.kind not in TEXTS:
            raise ShapeError(self.span, f"expected a quoted text here, got {self}", 'write it in quotes: "..."')
        return unquote(self, self.kind, self.line)[0]

    def ref(self) -> n.Ref:
        """A NAME, as a reference the checks resolve (a template, a data source, a factor, ...)."""
        if self.kind != "NAME":
            raise ShapeError(self.span, f"expected a name here, got {self}",
                             "write a name: a letter or _, then letters, digits or _")
        return n.Ref(span=self.span, name=str(self))


def plain(item: Any) -> Any:
    """An argument as a plain Python value: a text's string, a NUMBER's number, any other word's string, and
    tuples of them."""
    if isinstance(item, n.Text):
        return item.value
    if isinstance(item, Leaf):
        return item.number() if item.kind == "NUMBER" else str(item)
    if isinstance(item, tuple):
        return tuple(plain(x) for x in item)
    return item


def parse_number(text: str) -> int | float:
    """The value of a NUMBER's text (the grammar's `-?digits[.digits]`)."""
    return float(text) if "." in text else int(text)


def unquote(raw: str, kind: str, line: int) -> tuple[str, int, int]:
    """The text of a quoted token, the spec line its first text line sits on, and its dedent width."""
    indent = 0
    if kind == "LONG_STRING":
        body = raw[3:-3]
        if body.startswith("\n"):
            body, line = body[1:], line + 1
        dedented = textwrap.dedent(body)
        indent = _leading_width(body) - _leading_width(dedented)
        body = dedented.rstrip(" \t").removesuffix("\n")
    else:
        body = raw[1:-1]
    return _ESCAPE.sub(lambda m: _ESCAPES[m.group(1)], body), line, indent


def _leading_width(text: str) -> int:
    """Indentation of the first non-blank line."""
    first = next((line for line in text.split("\n") if line.strip()), "")
    return len(first) - len(first.lstrip())
