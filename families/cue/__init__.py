"""Cue visibility (seed 003): identity stated outright (Direct) or hidden in a logic puzzle proved unique
with Z3 (Puzzled), against a Neutral baseline. docs/puzzles.md describes the puzzles and the scoring.

    check.py     stage 3: clauses checked, data read, the puzzle block resolved
    expand.py    stage 4: templates compiled, combinations drawn, puzzles certified; rows expanded
    score/       the tidy frame of probe answers (load.py) and pure metrics over it (metrics.py, events.py,
                 stats.py; the appendix breakdowns in breakdowns.py); outputs.py writes them
                 (outputs.score is `spec score`)
    plan.py      `spec plan`: the variances of each format's Net and of the cue gaps
    report.py    `spec report`: capability, Net and cue gap tables with the Net-by-group plot
"""

from __future__ import annotations

from spec_audits.families.cue.check import CLAUSES, resolve_cue
from spec_audits.families.cue.clauses import SYNTAX
from spec_audits.families.cue.expand import prepare_cue
from spec_audits.sdk import Family, Form, imported, lazy

FAMILY = Family(
    name="cue_visibility",
    title="cue-visibility",
    reads_replies=True,  # the last JSON object of a reply holds its answer and the attributes it names
    clauses=CLAUSES,
    syntax=SYNTAX,
    answers=(Form("yesno", "yesno"), Form("options", 'options "option1" | "option2"')),
    conditions=(Form("neutral", "neutral"), Form("direct", "direct"), Form("puzzled", "puzzled(PUZZLE, band, ...)")),
    analysis_options=(Form("restrict", "restrict solved | none"), Form("parse", "parse strict | tolerant"),
                      Form("exclude_abstention", "exclude_abstention RATE")),
    check=resolve_cue,
    prepare=prepare_cue,
    score=lazy("spec_audits.families.cue.score.outputs", "score"),
    score_runs=lazy("spec_audits.families.cue.score.outputs", "score_runs"),
    report=lazy("spec_audits.families.cue.report", "cue_report"),
    variances=lazy("spec_audits.families.cue.plan", "variances"),
    docs="docs/puzzles.md",
    analysis_record=imported("spec_audits.families.cue.record", "CueRecord"),
)
