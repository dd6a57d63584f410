"""Effects designs: factors of any number of levels crossed factorially (or in a balanced fraction), every
stimulus under a baseline and named interventions, one answer form (yes/no, N options, a scale 1..K, a
number), and an effects analysis: per-level contrasts against a reference, a regression on the factors and
conditions, BH-FDR, per-scenario breakdowns (docs/scoring.md, "Effects designs").

    design.py    the typed input the expansion takes (EffectsInput), whatever front built it
    check.py     stage 3: the design's clauses resolved into an EffectsInput
    crossing.py  full factorial, seeded balanced fraction, and the balance proved by counting
    prepare.py   stage 4: combinations fixed, balance proved, trials drawn, templates rendered once
    expand.py    the rows
    score/       results -> outcomes -> contrasts, regression, per-scenario shifts -> summary.json;
                 several models: paired differences between them (score/compare.py)
    plan.py      `spec plan`: each contrast's variance, from a pilot run or stated assumptions
    report.py    `spec report`: contrasts, regression, forest plot and heatmap (plots.py)
"""

from __future__ import annotations

from spec_audits.families.effects.check import CLAUSES, resolve
from spec_audits.families.effects.clauses import SYNTAX
from spec_audits.families.effects.prepare import prepare
from spec_audits.sdk import Family, Form, imported, lazy

FAMILY = Family(
    name="effects",
    title="effects",
    clauses=CLAUSES,
    answers=(Form("yesno", "yesno"), Form("options", 'options "a" | "b" | "c"'), Form("scale", "scale 1..7"),
             Form("number", "number 0..100")),
    conditions=(Form("baseline", "baseline"), Form("*", "INTERVENTION, ...")),
    analysis_options=(Form("scenarios", "scenarios random | cluster"), Form("alpha", "alpha X")),
    check=resolve,
    prepare=prepare,
    score=lazy("spec_audits.families.effects.score.pipeline", "score_run"),
    report=lazy("spec_audits.families.effects.report", "effects_report"),
    score_runs=lazy("spec_audits.families.effects.score.pipeline", "score_runs"),
    docs="docs/scoring.md",
    syntax=SYNTAX,
    analysis_record=imported("spec_audits.families.effects.record", "EffectsRecord"),
    variances=lazy("spec_audits.families.effects.plan", "variances"),
)
