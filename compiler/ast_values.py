"""Values shared by the AST builders: spans of tokens, numbers and scalars from parse-tree leaves."""

from __future__ import annotations

from typing import Any, cast

from lark import Token

from spec_audits.compiler import nodes as n
from spec_audits.compiler.errors import Span


def token_span(token: Token, file: str) -> Span:
    # a parsed token has its position; lark types it optional, for tokens made by hand
    return Span(file, cast(int, token.line), cast(int, token.column), token.end_line, token.end_column)


def number(token: Token) -> int | float:
    text = str(token)
    return float(text) if "." in text else int(text)


def scalar(item: Any) -> Any:
    if isinstance(item, n.Text):
        return item.value
    if isinstance(item, Token):
        return number(item) if item.type == "NUMBER" else str(item)
    if isinstance(item, tuple):
        return tuple(scalar(x) for x in item)
    return item
