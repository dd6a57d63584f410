"""Values shared by the AST builders: parse-tree tokens as spec's Leaf (the one conversion), and plain scalars."""

from __future__ import annotations

from typing import Any, cast

from lark import Token

from spec_audits.compiler.errors import Span
from spec_audits.compiler.leaf import Leaf, parse_number, plain


def leaf(token: Token, file: str) -> Leaf:
    """A parse-tree token as a shape and the AST builders read it: its text, terminal and span."""
    # a parsed token has its position; lark types it optional, for tokens made by hand
    span = Span(file, cast(int, token.line), cast(int, token.column), token.end_line, token.end_column)
    return Leaf(str(token), token.type, span)


def leaves(children: list[Any], file: str) -> list[Any]:
    """A rule's children with each token made a Leaf (what a clause's shape receives)."""
    return [leaf(child, file) if isinstance(child, Token) else child for child in children]


def scalar(item: Any) -> Any:
    """A value as a plain Python value (compiler/leaf.py plain), a token read as its Leaf would be."""
    if isinstance(item, Token):
        return parse_number(item) if item.type == "NUMBER" else str(item)
    return plain(item)
