"""The built LALR parser, kept between commands in the user's own cache folder.

Building the parser from the grammar (spec.lark) and the clauses of the families a spec names takes a tenth of a
second; loading its saved tables a fraction of that. The saved file is a pickle (lark's `Lark.save`), so it
is read only from the user's own cache folder and only when this user wrote it
(spec_audits.base.user_cache.read_private): never from the shared temporary folder, where lark's own `cache=True`
keeps it, nor from any folder a spec or a suite names. Its name is a hash of everything the tables depend
on: the grammar text (with the families' clauses), the options, lark's version and Python's. A file that
cannot be loaded (damaged, or written by another version) is built again and replaced; a cache folder that
cannot be written costs only the time.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import sys
from pathlib import Path
from typing import Any

import lark
from lark import Lark
from lark.parsers.lalr_analysis import IntParseTable, Reduce, Shift
from lark.parsers.lalr_parser import LALR_Parser, _Parser

from spec_audits.base.collector import collector_paused
from spec_audits.base.user_cache import cache_dir, read_private, write_private
from spec_audits.compiler.lexer import SharedContextualLexer

FOLDER = "parsers"  # under the user cache folder


class TableParser(LALR_Parser):
    """lark's LALR parser, whose saved table is read in one pass: lark's own reads each of its ~10,000 entries
    through its generic deserializer."""

    @classmethod
    def deserialize(  # type: ignore[override]  # as lark's LALR_Parser.deserialize, it takes the callbacks too
            cls, data: dict[str, Any], memo: dict[int, Any], callbacks: Any, debug: bool = False) -> TableParser:
        tokens = data["tokens"]
        states = {state: {tokens[token]: (Reduce, memo[arg["@"]]) if action else (Shift, arg)
                          for token, (action, arg) in actions.items()}
                  for state, actions in data["states"].items()}  # a reduction's rule is saved as {"@": its id}
        inst = cls.__new__(cls)
        table: Any = IntParseTable  # lark leaves its constructor unannotated, and types the attribute by the base
        inst._parse_table = table(states, data["start_states"], data["end_states"])
        inst.parser = _Parser(inst._parse_table, callbacks, debug)
        return inst


# lark's plug-ins: the table reader above and the lexer of compiler/lexer.py. The saved options name their classes
# (pickled by reference), so that a loaded parser uses them too.
OPTIONS = {"parser": "lalr", "propagate_positions": True, "maybe_placeholders": False,
           "_plugins": {"ContextualLexer": SharedContextualLexer, "LALR_Parser": TableParser}}


def cached_parser(grammar: str) -> Lark:
    """The parser of `grammar`, loaded from the user's cache folder, or built and saved there."""
    path = cache_file(grammar)
    parser = _saved(path)
    if parser is None:
        parser = Lark(grammar, **OPTIONS)
        buffer = io.BytesIO()
        parser.save(buffer)
        with contextlib.suppress(OSError):  # a read-only or full cache folder: the next command builds again
            write_private(path, buffer.getvalue())
    return parser


def cache_file(grammar: str) -> Path:
    """Where the parser of `grammar` is saved: named by a hash of all its tables depend on."""
    key = "\0".join((grammar, repr(sorted(OPTIONS.items())), lark.__version__, sys.version))
    return cache_dir() / FOLDER / f"{hashlib.sha256(key.encode()).hexdigest()}.lark"


def _saved(path: Path) -> Lark | None:
    """The parser saved at `path` by this user; None when there is none or it does not load."""
    data = read_private(path)
    if data is None:
        return None
    try:
        with collector_paused():  # its ~30,000 objects are all kept with the parser
            return Lark.load(io.BytesIO(data))
    except Exception:  # a damaged file, or one of another lark: built again and replaced
        return None

