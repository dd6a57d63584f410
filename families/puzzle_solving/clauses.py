"""The clause puzzle-solving designs take besides the shared ones."""

from __future__ import annotations

from spec_audits.sdk import clauses as c

COUNT = c.ClauseSpec("count", c.Counted(("per", "band")), "certified puzzles made per difficulty band")
SYNTAX: c.Syntax = (COUNT,)
