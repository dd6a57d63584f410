"""compiler/lexer.py lexes as lark's own contextual lexer does: the same tokens at the same places for every shipped
spec, and, for spec texts broken on purpose, the same lark errors and the same `spec check` syntax diagnostics
(recovery included). Each text is parsed by the spec parser and by a parser built from the same grammar with
lark's stock lexer."""

from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path

import pytest
from lark import Lark, Token, Tree
from lark.exceptions import LexError, UnexpectedCharacters, UnexpectedInput, UnexpectedToken

from spec_audits.compiler import recover
from spec_audits.compiler.clauses import clause_rules
from spec_audits.compiler.errors import SpecError
from spec_audits.compiler.lexer import SharedContextualLexer
from spec_audits.compiler.parse import GRAMMAR_PATH, spec_parser
from spec_audits.compiler.parser_cache import OPTIONS, cached_parser
from spec_audits.dispatch import registry
from tests.support import ROOT

MALFORMED = ROOT / "tests" / "fixtures" / "malformed"
SPECS = [path for path in sorted((ROOT / "specs").glob("*.spec")) + sorted(MALFORMED.glob("*.spec"))
         if path.name != "non_utf8.spec"]  # the one file that is not text
# What a slip of the keyboard puts in: a stray character, a keyword glued to a word, an open string, a comment.
EDITS = ['"', '"""', "@", ":", "#", "\n", "-", "1.5", "yesnoo", "factor", "design", "==", "{{", "x-y", "é", "\t"]


@pytest.fixture(scope="module")
def parsers() -> tuple[Lark, Lark]:
    """The spec parser of every family's clauses, and lark's own lexer over the same grammar."""
    syntax = registry.syntax()
    grammar = GRAMMAR_PATH.read_text(encoding="utf-8") + "\n" + clause_rules(syntax)
    stock = Lark(grammar, **{name: value for name, value in OPTIONS.items() if name != "_plugins"})
    return spec_parser(syntax), stock


def _tokens(tree: Tree[Token]) -> list[tuple[object, ...]]:
    return [(t.type, t.value, t.start_pos, t.line, t.column, t.end_line, t.end_column, t.end_pos)
            for t in tree.scan_values(lambda v: isinstance(v, Token))]


def _outcome(parser: Lark, text: str) -> tuple[object, ...]:
    """The parse's tokens, or the error lark raised with all it tells (the expected sets as sets)."""
    try:
        tree = parser.parse(text)
    except UnexpectedInput as err:
        told: tuple[object, ...] = (type(err), err.line, err.column, err.pos_in_stream)
        if isinstance(err, UnexpectedToken):
            return (*told, _tokens(Tree("t", [err.token])), set(err.expected), set(err.accepts or ()))
        if isinstance(err, UnexpectedCharacters):
            return (*told, err.char, set(err.allowed or ()))
        return told
    return (tree, _tokens(tree))


def _checked(parser: Lark, text: str, monkeypatch: pytest.MonkeyPatch) -> object:
    """What `spec check`'s parse stage makes of `text` with `parser`: the parse with its recovered syntax errors,
    or the diagnostics it stops with."""
    monkeypatch.setattr(recover, "spec_parser", lambda _syntax: parser)
    try:
        parsed = recover.parse_spec_text(text, "edited.spec", registry.syntax())
    except SpecError as err:
        return err.diagnostics
    return parsed.tree, parsed.diagnostics, parsed.damaged, parsed.whole


def _edits(seed: int, count: int) -> Iterator[str]:
    """`count` shipped specs, each with one character dropped or one of EDITS put in at a random place."""
    rng = random.Random(seed)
    for _ in range(count):
        text = rng.choice(SPECS).read_text(encoding="utf-8")
        at = rng.randrange(len(text) + 1)
        yield text[:at] + text[at + 1:] if rng.random() < 0.3 else text[:at] + rng.choice(EDITS) + text[at:]


@pytest.mark.parametrize("path", SPECS, ids=lambda path: path.name)
def test_every_shipped_spec_lexes_as_with_larks_lexer(path: Path, parsers: tuple[Lark, Lark]) -> None:
    ours, stock = parsers
    text = path.read_text(encoding="utf-8")
    assert _outcome(ours, text) == _outcome(stock, text)


def test_broken_specs_raise_larks_errors(parsers: tuple[Lark, Lark]) -> None:
    ours, stock = parsers
    outcomes = [(_outcome(ours, text), _outcome(stock, text)) for text in _edits(1, 300)]
    assert all(mine == theirs for mine, theirs in outcomes)
    kinds = {outcome[0] for outcome, _ in outcomes}
    assert {UnexpectedCharacters, UnexpectedToken} <= kinds  # both of lark's lexing errors were met


def test_broken_specs_get_the_same_diagnostics(parsers: tuple[Lark, Lark], monkeypatch: pytest.MonkeyPatch) -> None:
    ours, stock = parsers
    for text in _edits(2, 60):
        assert _checked(ours, text, monkeypatch) == _checked(stock, text, monkeypatch), text


def test_a_state_lexer_is_built_when_the_parse_first_reaches_its_state() -> None:
    syntax = registry.syntax()
    parser = cached_parser(GRAMMAR_PATH.read_text(encoding="utf-8") + "\n" + clause_rules(syntax))
    lexer = parser.parser.lexer
    assert isinstance(lexer, SharedContextualLexer)
    assert not lexer.lexers
    parser.parse((ROOT / "specs" / "triage.spec").read_text(encoding="utf-8"))
    assert 0 < len(lexer.lexers) < len(parser.parser.parser._parse_table.states) / 4  # not all ~600 states


def test_a_grammar_just_built_gets_larks_checks_of_its_terminals() -> None:
    with pytest.raises(LexError, match="zero-width terminals"):
        Lark('start: "a" EMPTY\nEMPTY: /b*/\n', **OPTIONS)
    with pytest.raises(LexError, match="Cannot compile token"):
        Lark('start: "a" BAD\nBAD: /(?P<x/\n', **OPTIONS)
