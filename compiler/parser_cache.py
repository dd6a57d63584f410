"""The built LALR parser, kept between commands in the user's own cache folder.

Building the parser from the grammar (spec.lark) and the clauses of the families a spec names takes a tenth of a
second; loading its saved form a fraction of that. The saved form is lark's own objects (terminals, rules, each
rule's tree builder and the LALR table) pickled as they are, so that C unpickling rebuilds them with no Python
code per object (lark's `Lark.save` form runs its generic deserializer over each of ~10,000 table entries, five
times as long). It is read only from the user's own cache folder and only when this user wrote it
(spec_audits.base.user_cache.read_private): never from the shared temporary folder, where lark's own `cache=True`
keeps it, nor from any folder a spec or a suite names; and even so its unpickler makes only the lark classes a
saved parser holds (_ALLOWED), nothing else a planted pickle could name. Its name is a hash of everything the
saved objects depend on: the grammar text (with the families' clauses), the options, the saved form's fields,
lark's version and Python's. A file that cannot be loaded (damaged, foreign, or written by another version) is
built again and replaced; a cache folder that cannot be written costs only the time.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import io
import pickle
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

import lark
from lark import Lark, Token, Tree
from lark.common import LexerConf, ParserConf
from lark.grammar import NonTerminal, Rule, RuleOptions, Terminal
from lark.lark import LarkOptions
from lark.lexer import PatternRE, PatternStr, TerminalDef
from lark.parse_tree_builder import (
    ChildFilterLALR,
    ChildFilterLALR_NoPlaceholders,
    ExpandSingleChild,
    PropagatePositions,
)
from lark.parser_frontends import ParsingFrontend
from lark.parsers.lalr_analysis import IntParseTable, Reduce, Shift
from lark.parsers.lalr_parser import LALR_Parser, _Parser

from spec_audits.base.collector import collector_paused
from spec_audits.base.user_cache import cache_dir, read_private, write_private
from spec_audits.compiler.lexer import SharedContextualLexer

FOLDER = "parsers"  # under the user cache folder

# The lexer of compiler/lexer.py, as lark's `ContextualLexer` plug-in.
OPTIONS = {"parser": "lalr", "propagate_positions": True, "maybe_placeholders": False,
           "_plugins": {"ContextualLexer": SharedContextualLexer}}


class _Saved(NamedTuple):
    """A built parser as it is saved: lark's objects, shared as the parser shares them."""

    options: dict[str, Any]  # lark's resolved options, less the plug-ins (OPTIONS names them)
    terminals: list[TerminalDef]
    ignore: list[str]
    start: list[str]
    rules: list[Rule]
    builders: list[Callable[[list[Any]], Any]]  # each rule's tree builder, in the order of `rules`
    states: dict[int, dict[str, tuple[Any, Any]]]  # the LALR table: state -> terminal or rule name -> action
    start_states: dict[str, int]
    end_states: dict[str, int]


# What a saved parser holds besides builtins' containers; the unpickler makes nothing else.
_ALLOWED: dict[tuple[str, str], object] = {(cls.__module__, cls.__qualname__): cls for cls in (
    str, NonTerminal, Terminal, Rule, RuleOptions, TerminalDef, PatternStr, PatternRE, Tree, functools.partial,
    ChildFilterLALR, ChildFilterLALR_NoPlaceholders, ExpandSingleChild, PropagatePositions)}
_ACTIONS = {"Shift": Shift, "Reduce": Reduce}  # lark tells them apart by identity: saved by name
_ALLOWED.update({(Shift.__class__.__module__, name): action for name, action in _ACTIONS.items()})


class _Unpickler(pickle.Unpickler):
    def find_class(self, module: str, name: str) -> Any:
        found = _ALLOWED.get((module, name))
        if found is None:
            raise pickle.UnpicklingError(f"{module}.{name} is not part of a saved parser")
        return found


class _Pickler(pickle.Pickler):
    def reducer_override(self, obj: Any) -> Any:
        if type(obj) is Token:  # a rule's name as the grammar's parser read it: saved as the name alone, as
            return str, (str(obj),)  # lark's own save does
        for name, action in _ACTIONS.items():
            if obj is action:
                return name  # a global of lark.parsers.lalr_analysis: loaded as the same object
        return NotImplemented


def cached_parser(grammar: str) -> Lark:
    """The parser of `grammar`, loaded from the user's cache folder, or built and saved there."""
    path = cache_file(grammar)
    parser = _saved(path)
    if parser is None:
        parser = Lark(grammar, **OPTIONS)
        with contextlib.suppress(OSError):  # a read-only or full cache folder: the next command builds again
            write_private(path, bytes.fromhex(path.stem) + saved_form(parser))
    return parser


def cache_file(grammar: str) -> Path:
    """Where the parser of `grammar` is saved: named by a hash of all its saved form depends on, which the file
    begins with too (a file renamed from another key's is not unpickled)."""
    key = "\0".join((grammar, repr(sorted(OPTIONS.items())), repr(_Saved._fields), lark.__version__, sys.version))
    return cache_dir() / FOLDER / f"{hashlib.sha256(key.encode()).hexdigest()}.parser"


def saved_form(parser: Lark) -> bytes:
    """The bytes `parser` is saved as: its _Saved, each table action one object however often it occurs (the
    unpickler then builds ~800 tuples, not ~9,000), and so each symbol and rule option (_share_symbols)."""
    _share_symbols(parser.rules)
    shared: dict[tuple[Any, Any], tuple[Any, Any]] = {}
    table = parser.parser.parser._parse_table
    states = {state: {name: shared.setdefault(action, action) for name, action in row.items()}
              for state, row in table.states.items()}
    for terminal in parser.lexer_conf.terminals:
        _ = terminal.pattern.max_width  # measured once here, kept with the pattern: the lexer orders by it
    saved = _Saved({name: value for name, value in parser.options.options.items() if name != "_plugins"},
                   list(parser.lexer_conf.terminals), list(parser.lexer_conf.ignore), parser.parser.parser_conf.start,
                   parser.rules, [parser._callbacks[rule] for rule in parser.rules], states,
                   table.start_states, table.end_states)
    buffer = io.BytesIO()
    _Pickler(buffer, protocol=5).dump(tuple(saved))
    return buffer.getvalue()


def _share_symbols(rules: list[Rule]) -> None:
    """The rules with equal symbols made one object, and equal options too, in place: lark reads them and never
    changes them, and the unpickler then builds ~270 symbols and 2 options, not ~930 and ~175."""
    one: dict[tuple[Any, ...], Any] = {}
    for rule in rules:
        rule.origin = one.setdefault(_symbol(rule.origin), rule.origin)
        rule.expansion = [one.setdefault(_symbol(symbol), symbol) for symbol in rule.expansion]
        options = rule.options
        rule.options = one.setdefault((RuleOptions, options.keep_all_tokens, options.expand1, options.priority,
                                       options.template_source, tuple(options.empty_indices)), options)


def _symbol(symbol: Any) -> tuple[Any, ...]:
    return type(symbol), str(symbol.name), getattr(symbol, "filter_out", None)


def _saved(path: Path) -> Lark | None:
    """The parser saved at `path` by this user; None when there is none or it does not load."""
    data = read_private(path)
    key = bytes.fromhex(path.stem)
    if data is None or not data.startswith(key):
        return None
    try:
        with collector_paused():  # its ~20,000 objects are all kept with the parser
            return assembled(_Saved._make(_Unpickler(io.BytesIO(data[len(key):])).load()))
    except Exception:  # a damaged file, a foreign one, or one of another lark: built again and replaced
        return None


def assembled(saved: _Saved) -> Lark:
    """The Lark parser of a saved form, as `Lark.load` would assemble it."""
    callbacks: dict[Any, Any] = dict(zip(saved.rules, saved.builders, strict=True))
    options = LarkOptions.__new__(LarkOptions)
    options.__dict__["options"] = {**saved.options, "_plugins": OPTIONS["_plugins"]}
    lexer_conf = LexerConf(saved.terminals, re, saved.ignore, skip_validation=True)
    lexer_conf.lexer_type = "contextual"
    parser_conf = ParserConf(saved.rules, callbacks, saved.start)
    parser_conf.parser_type = "lalr"
    table = LALR_Parser.__new__(LALR_Parser)
    table_type: Any = IntParseTable  # lark leaves its constructor unannotated, and types the attribute by the base
    table._parse_table = table_type(saved.states, saved.start_states, saved.end_states)
    table.parser = _Parser(table._parse_table, callbacks)
    parser = Lark.__new__(Lark)
    parser.options, parser.rules, parser.source_path = options, saved.rules, "<deserialized>"
    parser.lexer_conf, parser.terminals = lexer_conf, saved.terminals
    parser._terminals_dict = lexer_conf.terminals_by_name
    parser._callbacks = callbacks
    parser.parser = ParsingFrontend(lexer_conf, parser_conf, options, parser=table)
    return parser
