"""The clauses influence designs take besides the shared ones: their keywords and argument shapes."""

from __future__ import annotations

from spec_audits.sdk import Record, Span
from spec_audits.sdk import clauses as c
from spec_audits.sdk import nodes as n


class ExamplesShape(Record, c.Shape[tuple[int, n.Ref, int | None]]):
    """`examples N KIND [seed S]`: (count, the pool kind, seed or None)."""

    GRAMMAR = 'NUMBER NAME ("seed" NUMBER)?'
    WRITTEN = "N unused | block | block_all | others [seed S]"

    def build(self, at: c.Builder, span: Span, children: list[c.Leaf]) -> tuple[int, n.Ref, int | None]:
        seed = at.whole(children[2]) if len(children) > 2 else None
        return (at.whole(children[0]), at.ref(children[1]), seed)


FACTORS = c.ClauseSpec("factors", c.Selection(), "the factors whose levels are compared")
INFLUENCES = c.ClauseSpec("influences", c.Selection(), "the influences applied")
SIZES = c.ClauseSpec("sizes", c.Ranges(), "group sizes: n_A in 1..10, n_B in 1..10")
WHERE = c.ClauseSpec("where", c.Expression(), "a filter over the size pairs")
# the effects family crosses factors with the same keyword (cross age x gender x race): one shape for both
CROSS = c.ClauseSpec("cross", c.Crossing(), "the factors crossed (effects: cross age x gender x race); cross full")
SAMPLE = c.ClauseSpec("sample", c.Counted(), "a seeded subset of size pairs")
TRIALS = c.ClauseSpec("trials", c.Counted(("per", "cell")), "a seeded subset of trials per cell")
ITEMS = c.ClauseSpec("items", c.Name(), "a data source whose rows are the items")
EXAMPLES = c.ClauseSpec("examples", ExamplesShape(), "few-shot demonstrations drawn from the data")
SYNTAX: c.Syntax = (FACTORS, INFLUENCES, SIZES, WHERE, CROSS, SAMPLE, TRIALS, ITEMS, EXAMPLES)
# what a design over data items takes (items.py; here, so that a size-pair design never imports that module)
ITEMS_CLAUSES = ("items", "factors", "influences", "conditions", "order", "samples", "answer", "decode", "mode",
                 "analysis", "system", "prompt", "followups", "examples", "trials")
