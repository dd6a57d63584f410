"""Filter expressions (`where n_A != n_B`): the names they use, and their value in a context."""

from __future__ import annotations

import operator
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from spec_audits.compiler import nodes as n

_OPS: dict[str, Callable[[Any, Any], bool]] = {
    "==": operator.eq, "!=": operator.ne, "<": operator.lt,
    "<=": operator.le, ">": operator.gt, ">=": operator.ge,
}


def names(expr: n.Expr) -> Iterator[n.Name]:
    """Every name an expression reads, in source order."""
    if isinstance(expr, n.Name):
        yield expr
    elif isinstance(expr, n.Compare):
        yield from names(expr.left)
        yield from names(expr.right)
    elif isinstance(expr, n.BoolOp):
        for operand in expr.operands:
            yield from names(operand)
    elif isinstance(expr, n.Not):
        yield from names(expr.operand)


def evaluate(expr: n.Expr, context: Mapping[str, Any]) -> Any:
    """The value of an expression; names are looked up through nested mappings."""
    if isinstance(expr, n.Literal_):
        return expr.value
    if isinstance(expr, n.Name):
        value: Any = context
        for part in expr.parts:
            value = value[part]
        return value
    if isinstance(expr, n.Compare):
        return _OPS[expr.op](evaluate(expr.left, context), evaluate(expr.right, context))
    if isinstance(expr, n.Not):
        return not evaluate(expr.operand, context)
    if expr.op == "and":
        return all(evaluate(o, context) for o in expr.operands)
    return any(evaluate(o, context) for o in expr.operands)


def resolves(name: n.Name, context: Mapping[str, Any]) -> str | None:
    """None if the dotted name exists in the context, else the first part that does not."""
    value: Any = context
    for part in name.parts:
        if not isinstance(value, Mapping) or part not in value:
            return part
        value = value[part]
    return None
