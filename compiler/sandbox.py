"""The one jinja2 environment every spec template renders in: immutable, strict and bounded by counted work.

Templates come from strangers' specs, so a template can read its context but never change it
(ImmutableSandboxedEnvironment refuses `first.update(...)`), and every render is bounded by work it
counts, never by a clock: whether a spec compiles is the same on a busy machine as on an idle one.
Ranges, powers, repetition and widths are refused above fixed sizes before they are computed; every
render has a budget of MAX_STEPS steps (a loop turn, a lookup, a call, filter or operator, each output
piece, and each character or item a call, filter, operator, comparison or `~` handles), and its output
is at most MAX_OUTPUT characters.
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import operator
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from functools import lru_cache
from typing import Any

from jinja2 import StrictUndefined, Template, nodes, pass_context
from jinja2.exceptions import SecurityError
from jinja2.runtime import Context
from jinja2.sandbox import ImmutableSandboxedEnvironment, safe_range
from jinja2.visitor import NodeTransformer

from spec_audits.base.records import Record

MAX_ITERATIONS = 100_000  # range() items per render, summed over every range the render builds
MAX_EXPONENT = 64  # x ** y with |x| > 1 and y above this is refused
MAX_OUTPUT = 100_000  # characters one render may produce (repetition results included)
MAX_STEPS = 1_000_000  # counted work of one render (see the module docstring)

_DIGITS = re.compile(r"\d+")
_SIZED = (str, bytes, list, tuple, dict, set, frozenset)
_EACH, _SIZE = "_spec_steps_each", "_spec_steps_size"  # the metering filters the compiled code calls


class _Render(Record, frozen=False):
    """The work one render has done so far."""

    ranges: int = 0
    steps: int = 0


class StepTally(Record, frozen=False):
    """Steps summed over the renders inside `tally_steps()` (memoised renders add the steps they took)."""

    steps: int = 0


_render: contextvars.ContextVar[_Render] = contextvars.ContextVar("template_render")
_tally: contextvars.ContextVar[StepTally] = contextvars.ContextVar("template_tally")


class TemplateLimitError(SecurityError):
    """A template asked for more work than a spec template may do."""


class BoundedEnvironment(ImmutableSandboxedEnvironment):
    """An immutable sandbox whose every lookup, call, filter, operator and loop turn is counted, and whose
    calls, filters and `**`/`*`/`%` are checked against the size limits first.

    Widths are the way to a huge string in one C call (`"x".center(10**9)`, `"%999999999d" % 1`), which
    no count interrupts, so every number given to a call or filter, and every number in a format string,
    is at most MAX_OUTPUT."""

    intercepted_binops = frozenset({"**", "*", "%", "+"})

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self.filters = {name: _bounded_filter(f, name == "format") for name, f in self.filters.items()}
        self.filters[_EACH], self.filters[_SIZE] = _steps_each, _steps_size

    def _generate(self, source: nodes.Template, name: str | None, filename: str | None,
                  defer_init: bool = False) -> str:
        """The compiled code meters what no hook sees: loop turns, comparisons and `~`."""
        return super()._generate(_Meter().visit(source), name, filename, defer_init)

    def getattr(self, obj: Any, attribute: str) -> Any:
        charge(1)
        return super().getattr(obj, attribute)

    def getitem(self, obj: Any, argument: Any) -> Any:
        charge(1)
        return super().getitem(obj, argument)

    def call(self, __context: Context, __obj: Any, *args: Any, **kwargs: Any) -> Any:
        if __obj is range or __obj is safe_range:
            _spend_range(len(range(*args)))
        else:
            _check_arguments(args, kwargs)
        charge(1 + _held(getattr(__obj, "__self__", None)) + _sizes(args, kwargs))
        return _charged(super().call(__context, __obj, *args, **kwargs))

    def wrap_str_format(self, value: Any) -> Callable[..., str] | None:
        wrapped = super().wrap_str_format(value)
        if wrapped is not None:
            _check_widths(value.__self__)  # the format string of `"{:>999999999}".format`
        return wrapped

    def call_binop(self, context: Context, operator_name: str, left: Any, right: Any) -> Any:
        charge(1 + _size(left) + _size(right))
        if operator_name == "**":
            _check_power(left, right)
            return operator.pow(left, right)
        if operator_name == "%":
            _check_widths(left)
            return _charged(operator.mod(left, right))
        if operator_name == "+":
            return _charged(operator.add(left, right))
        _check_repeat(left, right)
        return _charged(operator.mul(left, right))


class _Meter(NodeTransformer):
    """Wraps each loop's sequence in a filter that counts its turns, and each comparison operand and `~`
    in one that counts the characters or items it handles."""

    def visit_For(self, node: nodes.For) -> nodes.For:
        self.generic_visit(node)
        node.iter = _filter(node.iter, _EACH)
        if node.recursive:  # `loop(children)` starts the loop again over a sequence of its own
            for call in node.find_all(nodes.Call):
                if isinstance(call.node, nodes.Name) and call.node.name == "loop" and call.args:
                    call.args[0] = _filter(call.args[0], _EACH)
        return node

    def visit_Compare(self, node: nodes.Compare) -> nodes.Compare:
        self.generic_visit(node)
        node.expr = _filter(node.expr, _SIZE)
        for operand in node.ops:
            operand.expr = _filter(operand.expr, _SIZE)
        return node

    def visit_Concat(self, node: nodes.Concat) -> nodes.Filter:
        self.generic_visit(node)
        return _filter(node, _SIZE)


def _filter(node: nodes.Node, name: str) -> nodes.Filter:
    return nodes.Filter(node, name, [], [], None, None, lineno=node.lineno)


@pass_context  # a context filter is never folded into a constant when the template compiles
def _steps_each(context: Context, sequence: Iterable[Any]) -> Iterator[Any]:
    for item in sequence:
        charge(1)
        yield item


@pass_context
def _steps_size(context: Context, value: Any) -> Any:
    charge(1 + _size(value))
    return value


def _bounded_filter(function: Callable[..., Any], formats: bool) -> Callable[..., Any]:
    """The filter, refusing huge numbers among its arguments (and huge widths in the format it applies),
    its inputs and result counted."""
    @functools.wraps(function)
    def bounded(*args: Any, **kwargs: Any) -> Any:
        _check_arguments(args, kwargs)
        if formats:
            _check_widths(next((a for a in args if isinstance(a, str)), ""))
        charge(1 + _sizes(args, kwargs))
        return _charged(function(*args, **kwargs))

    return bounded


def _size(value: Any) -> int:
    return len(value) if isinstance(value, _SIZED) else 0


def _held(value: Any) -> int:
    """A value's size with its items' (a list of long texts given to `join` costs their characters)."""
    if isinstance(value, list | tuple | set | frozenset):
        return len(value) + sum(map(_size, value))
    return _size(value)


def _sizes(args: tuple[Any, ...], kwargs: dict[str, Any]) -> int:
    return sum(map(_held, args)) + sum(map(_held, kwargs.values()))


def _charged(result: Any) -> Any:
    charge(_size(result))
    return result


def charge(steps: int) -> None:
    """Count work against the render in progress; past MAX_STEPS the render is refused."""
    state = _render.get(None)
    if state is None:
        return
    state.steps += steps
    if state.steps > MAX_STEPS:
        raise TemplateLimitError(f"the template takes more than {MAX_STEPS:,} steps to render (loop turns, "
                                 "lookups, calls and the characters they handle)")


def _check_arguments(args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    for value in (*args, *kwargs.values()):
        if isinstance(value, int) and abs(value) > MAX_OUTPUT:
            raise TemplateLimitError(f"the number {value} is too large for a call (at most {MAX_OUTPUT:,})")


def _check_widths(text: Any) -> None:
    if not isinstance(text, str):
        return
    for digits in _DIGITS.findall(text):
        if len(digits) > len(str(MAX_OUTPUT)) or int(digits) > MAX_OUTPUT:  # int() of 5,000 digits would raise
            shown = digits if len(digits) <= 12 else digits[:12] + "..."
            raise TemplateLimitError(f"the width {shown} in a format is too large (at most {MAX_OUTPUT:,})")


def _check_power(base: Any, exponent: Any) -> None:
    if isinstance(exponent, int | float) and isinstance(base, int | float) and abs(base) > 1 \
            and exponent > MAX_EXPONENT:
        raise TemplateLimitError(f"the power {base} ** {exponent} is too large (exponents up to {MAX_EXPONENT})")


def _check_repeat(left: Any, right: Any) -> None:
    for seq, count in ((left, right), (right, left)):
        if isinstance(seq, str | list | tuple) and isinstance(count, int) and len(seq) * count > MAX_OUTPUT:
            raise TemplateLimitError(f"repeating a sequence {count} times makes more than {MAX_OUTPUT:,} items")


def _spend_range(items: int) -> None:
    state = _render.get(None)
    if state is None:
        return
    state.ranges += items
    if state.ranges > MAX_ITERATIONS:
        raise TemplateLimitError(f"the template's ranges exceed {MAX_ITERATIONS:,} items in one render")


@lru_cache(maxsize=1)
def environment() -> BoundedEnvironment:
    return BoundedEnvironment(undefined=StrictUndefined, autoescape=False, keep_trailing_newline=False)


def bounded_render(template: Template, context: Mapping[str, Any]) -> str:
    """Render within the per-render budget of steps, range items and output; the steps it took are added
    to the tally of `tally_steps()` when one is open."""
    return rendered(template, context)[0]


def rendered(template: Template, context: Mapping[str, Any]) -> tuple[str, int]:
    """`bounded_render`, with the steps the render took."""
    state = _Render()
    token = _render.set(state)
    try:
        text = _generate(template, context)
    finally:
        _render.reset(token)
    add_steps(state.steps)
    return text, state.steps


def add_steps(steps: int) -> None:
    """Count a render's steps into the open tally (a memoised render adds the steps it took once)."""
    tally = _tally.get(None)
    if tally is not None:
        tally.steps += steps


@contextlib.contextmanager
def tally_steps() -> Iterator[StepTally]:
    """The steps of every render inside the block, summed: the compile budget's measure of template work."""
    tally = StepTally()
    token = _tally.set(tally)
    try:
        yield tally
    finally:
        _tally.reset(token)


def _generate(template: Template, context: Mapping[str, Any]) -> str:
    parts: list[str] = []
    size = 0
    for chunk in template.generate(context):
        size += len(chunk)
        if size > MAX_OUTPUT:
            raise TemplateLimitError(f"the template renders more than {MAX_OUTPUT:,} characters")
        charge(1)
        parts.append(chunk)
    return "".join(parts)
