"""The `puzzle` block's clauses, declared here (its owner) rather than in the shared grammar: the parser
adds a rule for each (compiler/clauses.py), and the block reaches the AST as a PuzzleDef whose clauses
keep their arguments as plain values, which spec_audits/puzzles/block.py reads."""

from __future__ import annotations

from spec_audits.compiler import clauses as c


def _clause(keyword: str, grammar: str, written: str, summary: str) -> c.ClauseSpec[tuple[object, ...]]:
    return c.ClauseSpec(keyword, c.Args(grammar, written), summary, block="puzzle")


SYNTAX: c.Syntax = (
    _clause("kind", "NAME", "propositional | zebra", "the puzzle family"),
    _clause("people", "value_list", "A, B, ...", "the people"),
    _clause("attribute", 'NAME "from" value_list ("pick" NUMBER)?', "NAME from V, ... [pick N]",
            "an attribute and its values"),
    _clause("shape", 'NAME (":" assignment ("," assignment)*)?', "NAME [: PERSON = V ..., ...]",
            "the solution's shape"),
    _clause("clues", 'weight ("," weight)*', "KIND WEIGHT, ...", "clue kinds and their weights"),
    _clause("bands", 'band ("," band)*', "NAME <= N, ...", "difficulty bands"),
    _clause("reuse", 'NUMBER NAME ("with" NAME NAME)?', "N dilemmas [with distinct combinations]",
            "how many dilemmas share a puzzle"),
    _clause("phrasing", "NAME text", 'NAME "TEXT"', "how a clue kind is worded"),
    _clause("budget", "NUMBER", "N", "attempts per puzzle: work, not time"),
    _clause("timeout", "NUMBER", "MS", "the solver's time limit"),
    _clause("minimal", "", "", "1-minimal clue sets"),
    _clause("style", "NAME value", "NAME VALUE", "a named puzzle style"),
)
