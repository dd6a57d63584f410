"""The clauses effects designs take besides the shared ones: their keywords and argument shapes."""

from __future__ import annotations

from spec_audits.sdk import Record, Span
from spec_audits.sdk import clauses as c
from spec_audits.sdk import nodes as n


class PairsShape(Record, c.Shape[tuple[tuple[n.Ref, n.Ref], ...]]):
    """`KEYWORD a SEP b, c SEP d, ...`: pairs of names (`reference age = a60`, `interactions age x gender`)."""

    separator: str
    example: str

    def grammar(self) -> str:
        pair = f'NAME "{self.separator}" NAME'
        return f'{pair} ("," {pair})*'

    def written(self) -> str:
        return f"{self.example}, ..."

    def build(self, at: c.Builder, span: Span, children: list[c.Leaf]) -> tuple[tuple[n.Ref, n.Ref], ...]:
        refs = [at.ref(leaf) for leaf in children]
        return tuple(zip(refs[::2], refs[1::2], strict=True))


CROSS = c.ClauseSpec("cross", c.Crossing(), "the factors crossed (effects: cross age x gender x race); cross full")
FRACTION = c.ClauseSpec("fraction", c.Counted(), "a balanced fraction of N combinations of the crossed factors")
REFERENCE = c.ClauseSpec("reference", PairsShape("=", "FACTOR = LEVEL"), "the level each factor is compared with")
INTERACTIONS = c.ClauseSpec("interactions", PairsShape("x", "FACTOR x FACTOR"), "interactions the regression fits")
ITEMS = c.ClauseSpec("items", c.Name(), "a data source whose rows are the items")
TRIALS = c.ClauseSpec("trials", c.Counted(("per", "cell")), "a seeded subset of trials per cell")
CORRECT = c.ClauseSpec("correct", c.NameThen("as"), "a template that renders each stimulus's target answer token, "
                       "scored as the outcome `correct` (or the NAME after `as`)")
SYNTAX: c.Syntax = (CROSS, FRACTION, REFERENCE, INTERACTIONS, ITEMS, TRIALS, CORRECT)
