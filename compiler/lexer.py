"""lark's contextual lexer, with each terminal's pattern compiled once for every parser state.

lark's ContextualLexer gives each parser state a scanner: one regular expression, the union of the terminals that
state accepts, compiled by `re` when the parse first reaches the state (about 30 states and 110 compiles for a spec,
most of a parse's CPU time). A union of alternatives matches at a position with its first alternative that matches
there, so trying the same terminals in the same order, one at a time, finds the same token: this lexer does that, with
each regular terminal compiled once and each literal one compared as text. Everything else is lark's own code (its
contextual and basic lexers' `lex` and `next_token`, and so every error they raise and every keyword they tell
from a name), and a state's lexer is built when the parse first reaches it, not for all ~500 states at load, over the
terminals sorted in lark's order and checked once for the whole grammar (lark's sorts and checks them again for each
state).
compiler/parser_cache.py hands this lexer to lark as the `ContextualLexer` plug-in.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Sequence
from copy import copy
from functools import cached_property
from types import ModuleType
from typing import Any

from lark.common import LexerConf
from lark.lexer import (
    AbstractBasicLexer,
    BasicLexer,
    ContextualLexer,
    TerminalDef,
    UnlessCallback,
    _regexp_has_newline,
)
from lark.utils import TextSlice

# A terminal as a scanner tries it: (name, its text when it is a literal without flags, else its compiled pattern).
_Entry = tuple[str, "str | None", "re.Pattern[str] | None"]


class _Patterns:
    """Each terminal's pattern, compiled once by lark's regular expression module with its flags (a literal
    without flags is compared as text instead)."""

    def __init__(self, terminals: Collection[TerminalDef], module: ModuleType, flags: int) -> None:
        self._literals = [terminal for terminal in terminals if terminal.pattern.type == "str"]
        self._re = module
        self._flags = flags
        self._entries: dict[str, _Entry] = {}
        self._covered: dict[str, frozenset[str]] = {}
        self._newline: dict[str, bool] = {}

    def newline(self, terminal: TerminalDef) -> bool:
        """Whether `terminal` may match a newline (lark's test, on its regular expression)."""
        found = self._newline.get(terminal.name)
        if found is None:
            found = self._newline[terminal.name] = _regexp_has_newline(terminal.pattern.to_regexp())
        return found

    def entry(self, terminal: TerminalDef) -> _Entry:
        """How a scanner tries `terminal`: as its alternative in lark's union would match."""
        found = self._entries.get(terminal.name)
        if found is None:
            pattern = terminal.pattern
            if pattern.type == "str" and not pattern.flags and not self._flags:
                found = (terminal.name, pattern.value, None)
            else:
                found = (terminal.name, None, self._re.compile(pattern.to_regexp(), self._flags))
            self._entries[terminal.name] = found
        return found

    def covered(self, regular: TerminalDef) -> frozenset[str]:
        """The literals whose text `regular` matches whole from its start (lark's test for a keyword that a name
        would take), among all of the grammar's."""
        found = self._covered.get(regular.name)
        if found is None:
            compiled = self._re.compile(regular.pattern.to_regexp(), self._flags)
            found = self._covered[regular.name] = frozenset(
                literal.name for literal in self._literals
                if (match := compiled.match(literal.pattern.value)) is not None
                and match.group(0) == literal.pattern.value)
        return found


class SharedScanner:
    """lark's Scanner (`match`, `fullmatch`, `allowed_types`) over terminals whose patterns are compiled once."""

    def __init__(self, terminals: Sequence[TerminalDef], patterns: _Patterns) -> None:
        self.terminals = terminals
        self.allowed_types = {terminal.name for terminal in terminals}
        self._entries = [patterns.entry(terminal) for terminal in terminals]

    def match(self, text: TextSlice[str], pos: int) -> tuple[str, str] | None:
        """The first terminal, in order, that matches at `pos`: (the text it matches, its name)."""
        source, end = text.text, text.end
        for name, literal, compiled in self._entries:
            if literal is not None:
                if source.startswith(literal, pos, end):
                    return literal, name
            else:
                found = compiled.match(source, pos, end)  # type: ignore[union-attr]  # set when literal is not
                if found is not None:
                    return found.group(0), name
        return None

    def fullmatch(self, text: str) -> str | None:
        """The name of the first terminal, in order, that matches all of `text`."""
        for name, literal, compiled in self._entries:
            if text == literal if literal is not None else compiled.fullmatch(text):  # type: ignore[union-attr]
                return name
        return None


class SharedBasicLexer(BasicLexer):
    """lark's BasicLexer whose scanner is a SharedScanner (the parser sets no lexer callbacks of its own), over
    terminals already in lark's order and checked (lark's own sorts and checks them again for each state)."""

    def __init__(self, conf: LexerConf, patterns: _Patterns) -> None:
        self.re = conf.re_module
        self.terminals = list(conf.terminals)
        self.newline_types = frozenset(terminal.name for terminal in self.terminals if patterns.newline(terminal))
        self.ignore_types = frozenset(conf.ignore)
        self.user_callbacks = conf.callbacks
        self.g_regex_flags = conf.g_regex_flags
        self.use_bytes = conf.use_bytes
        self.terminals_by_name = conf.terminals_by_name
        self._scanner = None
        self._patterns = patterns

    def _build_scanner(self) -> Any:  # lark types it as its own Scanner; SharedScanner has its interface
        terminals, self.callback = _unless(self.terminals, self._patterns)
        return SharedScanner(terminals, self._patterns)


def _unless(terminals: Collection[TerminalDef], patterns: _Patterns) -> tuple[list[TerminalDef], dict[str, Any]]:
    """lark's `_create_unless`: a literal that a regular terminal of its priority matches whole is found by that
    terminal and then renamed (a keyword that is also a name); one without flags of its own leaves the scan."""
    literals = [terminal for terminal in terminals if terminal.pattern.type == "str"]
    embedded: list[TerminalDef] = []
    callback: dict[str, Any] = {}
    for regular in (terminal for terminal in terminals if terminal.pattern.type == "re"):
        covered = patterns.covered(regular)
        unless = [literal for literal in literals if literal.priority == regular.priority and literal.name in covered]
        embedded += [literal for literal in unless if set(literal.pattern.flags) <= set(regular.pattern.flags)]
        if unless:
            callback[regular.name] = UnlessCallback(SharedScanner(unless, patterns))  # type: ignore[arg-type]
    return [terminal for terminal in terminals if terminal not in embedded], callback


class _StateLexers(dict[int, AbstractBasicLexer]):
    """Parser state -> its lexer, built when the parse first reaches the state."""

    def __init__(self, build: Callable[[int], AbstractBasicLexer]) -> None:
        super().__init__()
        self._build = build

    def __missing__(self, state: int) -> AbstractBasicLexer:
        lexer = self[state] = self._build(state)
        return lexer


class SharedContextualLexer(ContextualLexer):
    """lark's ContextualLexer (its `lex`, with the fallback to every terminal that names what an error found),
    with each state's lexer a SharedBasicLexer built on first use and shared by the states that accept the
    same terminals."""

    def __init__(self, conf: LexerConf, states: dict[int, Collection[str]],
                 always_accept: Collection[str] = ()) -> None:
        self._conf = conf
        self._states = states
        self._always = {*conf.ignore, *always_accept}
        self._patterns = _Patterns(conf.terminals, conf.re_module, conf.g_regex_flags)
        if not conf.skip_validation:  # a grammar just built: lark's checks of every terminal, once
            BasicLexer(conf)
        self._ordered = sorted(conf.terminals, key=_lark_order)
        self._by_accepts: dict[frozenset[str], AbstractBasicLexer] = {}
        self.lexers = _StateLexers(self._state_lexer)

    def _state_lexer(self, state: int) -> AbstractBasicLexer:
        key = frozenset(self._states[state])
        if key not in self._by_accepts:
            names = key | self._always
            conf = copy(self._conf)
            conf.terminals = [terminal for terminal in self._ordered if terminal.name in names]
            self._by_accepts[key] = SharedBasicLexer(conf, self._patterns)
        return self._by_accepts[key]

    @cached_property
    def root_lexer(self) -> AbstractBasicLexer:  # type: ignore[override]  # lark's is an attribute set at init
        """The lexer of every terminal, which lark's `lex` tries after an error to name what was found."""
        conf = copy(self._conf)
        conf.terminals = self._ordered
        return SharedBasicLexer(conf, self._patterns)


def _lark_order(terminal: TerminalDef) -> tuple[int, int, int, str]:
    """The order lark's BasicLexer tries terminals in: by priority, then the longest possible match first."""
    return -terminal.priority, -terminal.pattern.max_width, -len(terminal.pattern.value), terminal.name
