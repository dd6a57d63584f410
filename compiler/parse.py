"""Stage 1: spec text -> lark parse tree, with syntax errors that point at the spec."""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path
from typing import cast

from lark import Lark, Token, Tree
from lark.exceptions import UnexpectedCharacters, UnexpectedEOF, UnexpectedInput, UnexpectedToken

from spec_audits.base.records import Record
from spec_audits.compiler.clauses import Syntax, clause_rules
from spec_audits.compiler.errors import Diagnostic, Span, SpecError, did_you_mean
from spec_audits.compiler.parser_cache import cached_parser

GRAMMAR_PATH = Path(__file__).resolve().with_name("spec.lark")  # package data: every install has it

# Friendly names for the grammar's named terminals.
_TERMINAL_NAMES = {
    "NAME": "a name",
    "WORD": "a word",
    "NUMBER": "a number",
    "STRING": "a string",
    "LONG_STRING": "a string",
    "COMP_OP": "a comparison (==, !=, <, <=, >, >=)",
    "ROLE": "'user' or 'assistant'",
    "SHARED": "'shared'",
    "$END": "the end of the file",
}

# Known mistakes: (the token that was found, what the parser wanted) -> a message that says what to do.
_KNOWN_MISTAKES: tuple[tuple[str, str, str], ...] = (
    ("NAME", "COLON", "a block's name must be followed by ':' (e.g. 'factor gender:')"),
    ("NUMBER", "NAME", "a name was expected here, not a number"),
    ("STRING", "NAME", "a name was expected here, not a quoted string; drop the quotes"),
    ("$END", "STRING", "the file ends where a string was expected"),
)


def spec_parser(syntax: Syntax) -> Lark:
    """The LALR parser for compiler/spec.lark with the rules of the declared design clauses."""
    return _parser(GRAMMAR_PATH.read_text(encoding="utf-8") + "\n" + clause_rules(syntax))


@lru_cache(maxsize=4)
def _parser(grammar: str) -> Lark:
    """Built once per grammar in a process, and its tables kept between commands in the user's own cache
    folder (compiler/parser_cache.py), which saves a tenth of a second per `spec` command."""
    return cached_parser(grammar)


MAX_DEPTH = 100  # nesting of the parse tree; later stages recurse over it, so deeper would overflow the stack


class LazySyntax(Record):
    """The clauses of only the families a text names, and of every family when that does not parse: a spec
    check loads the families its designs declare, and a syntax error is judged by the whole language (so
    its message, and a clause of a family the design does not name, read as they always did)."""

    named: Callable[[frozenset[str]], Syntax]  # analysis names (DEFAULT_ANALYSIS for a bare design) -> clauses
    full: Callable[[], Syntax]


DEFAULT_ANALYSIS = ""  # in the names a text declares: a design that declares no analysis (the default family)
# What may hide a name (strings, comments), a block's header (`design NAME:`, `generator NAME:`, ...) and an
# `analysis NAME`.
_SCAN = re.compile(r'"""(?:[^"\\]|\\.|"(?!""))*"""|"(?:[^"\\\n]|\\.)*"|#[^\n]*'
                   r"|^[ \t]*([A-Za-z_]\w*)[ \t]+[A-Za-z_]\w*[ \t]*:|\banalysis\s+([A-Za-z_]\w*)", re.MULTILINE)


def declared_analyses(text: str) -> frozenset[str]:
    """The analysis names a spec text declares, and DEFAULT_ANALYSIS when one of its designs declares none,
    read without parsing (strings and comments skipped). A guess good enough to pick the clauses to parse
    with: what it misses, the fallback to every family's clauses finds."""
    names: set[str] = set()
    bare = False  # inside a design that has declared no analysis so far
    for match in _SCAN.finditer(text):
        if match.group(1):  # a block begins: the design before it, if any, ends
            if bare:
                names.add(DEFAULT_ANALYSIS)
            bare = match.group(1) == "design"
        elif match.group(2):
            names.add(match.group(2))
            bare = False
    return frozenset(names | ({DEFAULT_ANALYSIS} if bare else set()))


def checked_depth(tree: Tree[Token], file: str, text: str) -> Tree[Token]:
    """The tree; a SpecError when it nests deeper than MAX_DEPTH."""
    deep = _too_deep(tree)
    if deep is not None:
        span = Span(file, deep.meta.line, deep.meta.column) if not deep.meta.empty else Span(file, 1, 1)
        raise SpecError([Diagnostic(span, f"expression nested more than {MAX_DEPTH} levels deep",
                                    "split the condition, or write it with fewer 'not' and parentheses")],
                        {file: text})
    return tree


def _too_deep(tree: Tree[Token]) -> Tree[Token] | None:
    """The first subtree deeper than MAX_DEPTH, found without recursion."""
    stack = [(tree, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > MAX_DEPTH:
            return node
        stack.extend((child, depth + 1) for child in node.children if isinstance(child, Tree))
    return None


def diagnose(parser: Lark, err: UnexpectedInput, text: str, file: str) -> Diagnostic:
    """One located diagnostic for a syntax error: what was found, what the parser wanted, and a hint."""
    glued = _glued_word(parser, err, text, file)
    if glued is not None:
        return glued
    if isinstance(err, UnexpectedCharacters):
        return _bad_character(parser, err, text, file)
    if isinstance(err, UnexpectedToken):
        return _bad_token(parser, err, text, file)
    if isinstance(err, UnexpectedEOF):
        expected = _describe_expected(parser, set(err.expected))
        line = text.count("\n") + 1
        column = len(text.rsplit("\n", 1)[-1]) + 1
        return Diagnostic(Span(file, line, column), f"unexpected end of file; expected {expected}")
    return Diagnostic(Span(file, err.line, err.column), str(err))


_WORD = re.compile(r"\w+")
_WORD_END = re.compile(r"\w*$")


def _glued_word(parser: Lark, err: UnexpectedInput, text: str, file: str) -> Diagnostic | None:
    """A misspelt keyword whose first letters are a keyword (`answer yesnoo`: 'yesno', then 'o'): the whole
    word is what was found, what the parser wanted before it is expected, and the closest keyword the hint."""
    at = err.token.start_pos if isinstance(err, UnexpectedToken) else err.pos_in_stream
    if at is None or not 0 < at < len(text) or not _WORD.fullmatch(text[at - 1:at + 1]):
        return None
    start = at - len(_WORD_END.findall(text[:at])[0])
    word = _WORD.findall(text, start)[0]
    try:
        expected = accepted(parser, text[:start])
    except UnexpectedInput:
        return None
    line, column = text.count("\n", 0, start) + 1, start - text.rfind("\n", 0, start)
    span = Span(file, line, column, line, column + len(word))
    return Diagnostic(span, f"unexpected {word!r}; expected {_describe_expected(parser, expected)}",
                      did_you_mean(word, keywords(parser, expected)))


def accepted(parser: Lark, text: str) -> set[str]:
    """The terminals the parser accepts after `text` (an UnexpectedInput when `text` itself is wrong)."""
    interactive = parser.parse_interactive(text)
    interactive.exhaust_lexer()
    return set(interactive.accepts())  # type: ignore[no-untyped-call]  # lark leaves accepts() unannotated


def _bad_character(parser: Lark, err: UnexpectedCharacters, text: str, file: str) -> Diagnostic:
    at = cast(int, err.pos_in_stream)  # set by UnexpectedCharacters; lark types it on the base class, None there
    char = text[at] if at < len(text) else ""
    span = Span(file, err.line, err.column, err.line, err.column + 1)
    if char == '"':
        return Diagnostic(
            span,
            "unterminated string",
            'close the string with " on the same line, or use """ ... """ for text over several lines',
        )
    allowed = _describe_expected(parser, set(err.allowed or ()))
    return Diagnostic(span, f"unexpected character {char!r}; expected {allowed}")


def _bad_token(parser: Lark, err: UnexpectedToken, text: str, file: str) -> Diagnostic:
    token: Token = err.token
    expected = set(err.expected)
    span = _token_span(token, file)
    found = "end of file" if token.type == "$END" else f"{token.value!r}"
    message = f"unexpected {found}; expected {_describe_expected(parser, expected)}"
    previous = _previous_token(parser, text, token)
    if previous is not None and (token.type == "$END" or "COLON" in expected and token.line != previous.end_line):
        # What is missing belongs at the end of the previous token, not at the next line's first word.
        span = Span(file, previous.end_line or 1, previous.end_column or 1)
        if token.type != "$END":
            message = f"expected {_describe_expected(parser, expected)} after {previous.value!r}"
    hint = _known_mistake(token.type, expected)
    if hint is None and token.type in ("NAME", "WORD"):
        hint = did_you_mean(str(token.value), keywords(parser, expected))
    return Diagnostic(span, message, hint)


def _previous_token(parser: Lark, text: str, token: Token) -> Token | None:
    """The last token before `token` (comments skipped), or None if there is none."""
    end = len(text) if token.type == "$END" or token.start_pos is None else token.start_pos
    last = None
    try:
        for last in parser.lex(text[:end]):  # noqa: B007 - only the last one is wanted
            pass
    except UnexpectedInput:
        return None
    return last


def _token_span(token: Token, file: str) -> Span:
    if token.type == "$END" or token.line is None:
        return Span(file, max(token.line or 1, 1), max(token.column or 1, 1))
    return Span(file, token.line, cast(int, token.column), token.end_line, token.end_column)


def _known_mistake(found: str, expected: set[str]) -> str | None:
    for token_type, wanted, message in _KNOWN_MISTAKES:
        if found == token_type and wanted in expected:
            return message
    return None


def keywords(parser: Lark, expected: set[str]) -> list[str]:
    """The keywords among the terminals `expected`."""
    terminals = {t.name: t for t in parser.terminals}
    words = []
    for name in expected:
        term = terminals.get(name)
        if term is not None and term.pattern.type == "str" and term.pattern.value.isidentifier():
            words.append(term.pattern.value)
    return words


def _describe_expected(parser: Lark, expected: set[str]) -> str:
    terminals = {t.name: t for t in parser.terminals}
    names: set[str] = set()
    for name in expected:
        if name in _TERMINAL_NAMES:
            names.add(_TERMINAL_NAMES[name])
        elif name in terminals and terminals[name].pattern.type == "str":
            names.add(f"'{terminals[name].pattern.value}'")
        else:
            names.add(name.lower())
    ordered = sorted(names)
    if len(ordered) > 8:
        return ", ".join(ordered[:8]) + f" or one of {len(ordered) - 8} more"
    if len(ordered) == 1:
        return ordered[0]
    return ", ".join(ordered[:-1]) + " or " + ordered[-1]
