"""The clauses cue-visibility designs take besides the shared ones: their keywords and argument shapes."""

from __future__ import annotations

from spec_audits.sdk import clauses as c

OVER = c.ClauseSpec("over", c.Crossing(), "the data source crossed with the design's axes")
PROBES = c.ClauseSpec("probes", c.Probes(), "the questions asked of every puzzle, with their answer forms")
SYNTAX: c.Syntax = (OVER, PROBES)
