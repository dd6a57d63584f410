"""Stage 1, continued: every syntax error of a file in one pass. After an error the parser resumes at the next
clause or statement: the broken one is blanked (its characters made spaces, so every line and column stays
where it was) and the text parsed again, so `spec check` reports each mistake once. When only clauses of
designs were lost, the later stages run on what parsed: such a design is marked damaged, and its family's
findings at the design's header (a clause it misses, which the syntax error already named) are left out.
When a whole statement was lost (a factor, a template, the seed, ...), the later stages would report what it
declares as missing, so the syntax errors are reported alone."""

from __future__ import annotations

import re
from functools import lru_cache

from lark import Lark, Token, Tree
from lark.exceptions import UnexpectedInput

from spec_audits.base.records import Record
from spec_audits.compiler.clauses import Syntax
from spec_audits.compiler.errors import Diagnostic, SpecError
from spec_audits.compiler.parse import (
    LazySyntax,
    accepted,
    checked_depth,
    declared_analyses,
    diagnose,
    keywords,
    spec_parser,
)

MAX_SYNTAX_ERRORS = 20  # a file this broken is reported in part: its first errors say what to fix first
_FIRST_WORD = re.compile(r"[ \t]*([A-Za-z_]\w*)")


class Parsed(Record):
    """A spec text's parse tree (of what parsed), the clauses it was parsed with, its syntax errors and the
    lines of the `design` headers whose designs lost a clause to one."""

    tree: Tree[Token]
    syntax: Syntax
    diagnostics: tuple[Diagnostic, ...] = ()
    damaged: frozenset[int] = frozenset()
    whole: bool = True  # no statement was lost, only clauses of designs: the later stages may run


def parse_spec_text(text: str, file: str, syntax: Syntax | LazySyntax) -> Parsed:
    """Parse spec text whose designs take the clauses of `syntax` (only the families the text names first,
    for a LazySyntax), recovering after each syntax error; raise SpecError for nesting too deep, and listing
    the syntax errors when recovery gives up."""
    if isinstance(syntax, LazySyntax):
        named = syntax.named(declared_analyses(text))
        try:
            return Parsed(checked_depth(spec_parser(named).parse(text), file, text), named)
        except UnexpectedInput:
            syntax = syntax.full()
    parser = spec_parser(syntax)
    diagnostics: list[Diagnostic] = []
    damaged: set[int] = set()
    lost: set[int] = set()  # the lines of the statements blanked whole
    current = text
    while True:
        try:
            tree = parser.parse(current)
            break
        except UnexpectedInput as err:
            diagnostic = diagnose(parser, err, current, file)
            repaired = _blanked(parser, current, diagnostic.span.line, damaged, lost)
            if diagnostic in diagnostics or repaired == current or len(diagnostics) == MAX_SYNTAX_ERRORS:
                raise SpecError([*diagnostics, diagnostic][:MAX_SYNTAX_ERRORS], {file: text}) from None
            diagnostics.append(diagnostic)
            current = repaired
    return Parsed(checked_depth(tree, file, text), syntax, tuple(diagnostics), frozenset(damaged), not lost)


@lru_cache(maxsize=8)
def _starts(parser: Lark) -> tuple[frozenset[str], frozenset[str]]:
    """The keywords that begin a statement, and those that begin a clause of a design or a block."""
    top = frozenset(keywords(parser, accepted(parser, "")))
    inner: set[str] = set()
    for block in top:
        try:
            inner |= set(keywords(parser, accepted(parser, f"{block} x:")))
        except UnexpectedInput:  # a statement with no `NAME :` body (suite, seed, ...)
            continue
    return top, frozenset(inner - top)


def _blanked(parser: Lark, text: str, line: int, damaged: set[int], lost: set[int]) -> str:
    """The text with the clause or statement that holds line `line` made spaces; the header line of a design
    that loses a clause so is added to `damaged`, the first line of a statement blanked whole to `lost`."""
    top, inner = _starts(parser)
    lines = text.split("\n")
    words = [match[1] if (match := _FIRST_WORD.match(row)) else "" for row in lines]
    start = next((i for i in range(min(line, len(lines)) - 1, -1, -1) if words[i] in top | inner), 0)
    ends = top if words[start] in top or start == 0 and words[0] not in inner else top | inner
    end = next((i for i in range(start + 1, len(lines)) if words[i] in ends), len(lines))
    header = next((i for i in range(start, -1, -1) if words[i] in top), None)
    if words[start] in inner and header is not None and words[header] == "design":
        damaged.add(header + 1)
    else:
        lost.add(start + 1)
    return "\n".join(re.sub(r"\S", " ", row) if start <= i < end else row for i, row in enumerate(lines))
