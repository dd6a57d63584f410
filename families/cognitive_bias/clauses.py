"""The clauses conditional-bias designs take besides the shared ones: their keywords and argument shapes."""

from __future__ import annotations

from spec_audits.sdk import Record, Span
from spec_audits.sdk import clauses as c
from spec_audits.sdk import nodes as n


class RetriesShape(Record, c.Shape[tuple[int, n.Ref | None]]):
    """`retries N [feedback TEMPLATE]`: (retries, the feedback template or None)."""

    GRAMMAR = 'NUMBER ("feedback" NAME)?'
    WRITTEN = "N [feedback TEMPLATE]"

    def build(self, at: c.Builder, span: Span, children: list[c.Leaf]) -> tuple[int, n.Ref | None]:
        return (at.whole(children[0]), at.ref(children[1]) if len(children) > 1 else None)


def _generator(keyword: str, shape: c.Shape[c.T], summary: str) -> c.ClauseSpec[c.T]:
    return c.ClauseSpec(keyword, shape, summary, block="generator")



OVER = c.ClauseSpec("over", c.Crossing(), "the data source of bank rows")
UNIT = c.ClauseSpec("unit", c.Names(), "the bank columns that identify one unit")
ARMS = c.ClauseSpec("arms", c.Names(), "the control and treatment columns")
PROTOCOL = c.ClauseSpec("protocol", c.NameThen("extract"), "how the decision is read: authors | paper")
REVERSE = c.ClauseSpec("reverse", c.NumberThenNames("by"), "the probability of reversing the options")
FROM = _generator("from", c.Name(), "the data source of bias rows")
HUMANS = _generator("humans", c.Text(), "the human answers, a|b|...")
MODEL = _generator("model", c.Text(), "the model that writes")
PROMPT = _generator("prompt", c.Name(), "the writing template")
NEUTRAL = _generator("neutral", c.Name(), "the neutral writing template")
PERSONA = _generator("persona", c.Options(), "persona settings")
DECODE = _generator("decode", c.Options(), "decode settings of the writer")
JURY = _generator("jury", c.Texts(), "the judging models")
ACCEPT = _generator("accept", c.Bands(), "acceptance minimums")
RETRIES = _generator("retries", RetriesShape(), "rewrites of a rejected text")
WRITE = _generator("write", c.Text(), "the file written")
SYNTAX: c.Syntax = (OVER, UNIT, ARMS, PROTOCOL, REVERSE, FROM, HUMANS, MODEL, PROMPT, NEUTRAL, PERSONA, DECODE, JURY,
                    ACCEPT, RETRIES, WRITE)
