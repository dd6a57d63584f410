"""The clauses conditional-bias designs take besides the shared ones: their keywords and argument shapes."""

from __future__ import annotations

from spec_audits.compiler import clauses as c

OVER = c.ClauseSpec("over", c.Crossing(), "the data source of bank rows")
UNIT = c.ClauseSpec("unit", c.Names(), "the bank columns that identify one unit")
ARMS = c.ClauseSpec("arms", c.Names(), "the control and treatment columns")
PROTOCOL = c.ClauseSpec("protocol", c.NameThen("extract"), "how the decision is read: authors | paper")
REVERSE = c.ClauseSpec("reverse", c.NumberThenNames("by"), "the probability of reversing the options")
SYNTAX: c.Syntax = (OVER, UNIT, ARMS, PROTOCOL, REVERSE)
