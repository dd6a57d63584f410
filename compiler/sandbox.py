"""The one jinja2 environment every spec template renders in: immutable, strict and bounded.

Templates come from strangers' specs, so a template can read its context but never change it
(ImmutableSandboxedEnvironment refuses `first.update(...)`), and every render is bounded: ranges,
powers and repetition are refused above fixed sizes before they are computed, and a render stops when
its output or its time passes a limit.
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import operator
import re
import signal
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from functools import lru_cache
from typing import Any

from jinja2 import StrictUndefined, Template
from jinja2.exceptions import SecurityError
from jinja2.runtime import Context
from jinja2.sandbox import ImmutableSandboxedEnvironment, safe_range

MAX_ITERATIONS = 100_000  # range() items per render, summed over every range the render builds
MAX_EXPONENT = 64  # x ** y with |x| > 1 and y above this is refused
MAX_OUTPUT = 100_000  # characters one render may produce (repetition results included)
MAX_SECONDS = 2.0  # wall time of one render

_DIGITS = re.compile(r"\d+")
_handler_installed = False  # inside many_renders(): SIGALRM is already handled by _timed_out
_budget: contextvars.ContextVar[list[float]] = contextvars.ContextVar("template_budget")


class TemplateLimitError(SecurityError):
    """A template asked for more work than a spec template may do."""


class BoundedEnvironment(ImmutableSandboxedEnvironment):
    """An immutable sandbox whose calls, filters and `**`/`*`/`%` are checked against the limits first.

    Widths are the way to a huge string in one C call (`"x".center(10**9)`, `"%999999999d" % 1`), which
    no timer interrupts, so every number given to a call or filter, and every number in a format string,
    is at most MAX_OUTPUT."""

    intercepted_binops = frozenset({"**", "*", "%"})

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self.filters = {name: _bounded_filter(f, name == "format") for name, f in self.filters.items()}

    def call(self, __context: Context, __obj: Any, *args: Any, **kwargs: Any) -> Any:
        _check_time()
        if __obj is range or __obj is safe_range:
            _spend(len(range(*args)))
        else:
            _check_arguments(args, kwargs)
        return super().call(__context, __obj, *args, **kwargs)

    def wrap_str_format(self, value: Any) -> Callable[..., str] | None:
        wrapped = super().wrap_str_format(value)
        if wrapped is not None:
            _check_widths(value.__self__)  # the format string of `"{:>999999999}".format`
        return wrapped

    def call_binop(self, context: Context, operator_name: str, left: Any, right: Any) -> Any:
        _check_time()
        if operator_name == "**":
            _check_power(left, right)
            return operator.pow(left, right)
        if operator_name == "%":
            _check_widths(left)
            return operator.mod(left, right)
        _check_repeat(left, right)
        return operator.mul(left, right)


def _bounded_filter(function: Callable[..., Any], formats: bool) -> Callable[..., Any]:
    """The filter, refusing huge numbers among its arguments (and huge widths in the format it applies)."""
    @functools.wraps(function)
    def bounded(*args: Any, **kwargs: Any) -> Any:
        _check_arguments(args, kwargs)
        if formats:
            _check_widths(next((a for a in args if isinstance(a, str)), ""))
        return function(*args, **kwargs)

    return bounded


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


def _spend(items: int) -> None:
    state = _budget.get(None)
    if state is None:
        return
    state[1] += items
    if state[1] > MAX_ITERATIONS:
        raise TemplateLimitError(f"the template's ranges exceed {MAX_ITERATIONS:,} items in one render")


def _check_time() -> None:
    state = _budget.get(None)
    if state is not None and time.monotonic() - state[0] > MAX_SECONDS:
        _timed_out(0, None)


@lru_cache(maxsize=1)
def environment() -> BoundedEnvironment:
    return BoundedEnvironment(undefined=StrictUndefined, autoescape=False, keep_trailing_newline=False)


def bounded_render(template: Template, context: Mapping[str, Any]) -> str:
    """Render with the per-render budget of iterations, output size and time."""
    token = _budget.set([time.monotonic(), 0])
    with _alarm():
        try:
            return _generate(template, context)
        finally:
            _budget.reset(token)


@contextlib.contextmanager
def many_renders() -> Iterator[None]:
    """The time limit's signal handler installed once for a stretch of many renders (a suite's rows):
    each render then only arms and disarms its timer, a third of a short render's cost saved."""
    global _handler_installed
    if _handler_installed or not _may_alarm():
        yield
        return
    previous = signal.signal(signal.SIGALRM, _timed_out)
    _handler_installed = True
    try:
        yield
    finally:
        _handler_installed = False
        signal.signal(signal.SIGALRM, previous)


@contextlib.contextmanager
def _alarm() -> Iterator[None]:
    """A timer that interrupts a render stuck in a loop no hook sees (`{% for a in s %}{% for b in s %}`).

    Signals reach only the main thread, and a timer someone else armed is left alone; in both cases the
    hooks' own time checks are the limit."""
    installed = _handler_installed
    if not _may_alarm():
        yield
        return
    if not installed:
        previous = signal.signal(signal.SIGALRM, _timed_out)
    signal.setitimer(signal.ITIMER_REAL, MAX_SECONDS)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        if not installed:
            signal.signal(signal.SIGALRM, previous)


def _may_alarm() -> bool:
    return threading.current_thread() is threading.main_thread() and not signal.getitimer(signal.ITIMER_REAL)[0]


def _timed_out(signum: int, frame: Any) -> None:
    raise TemplateLimitError(f"the template takes longer than {MAX_SECONDS:g} s to render")


def _generate(template: Template, context: Mapping[str, Any]) -> str:
    parts: list[str] = []
    size = 0
    for chunk in template.generate(context):
        size += len(chunk)
        if size > MAX_OUTPUT:
            raise TemplateLimitError(f"the template renders more than {MAX_OUTPUT:,} characters")
        _check_time()
        parts.append(chunk)
    return "".join(parts)
