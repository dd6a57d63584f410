"""Conditional cognitive bias (seed 004): does a biased user turn earlier in a conversation change a model's
susceptibility to a cognitive bias measured later? Nine Malberg-style tests (control and treatment arms)
played with no user turn, a neutral one and a biased one. docs/cognitive-bias.md describes the family.

    check.py     stage 3: clauses resolved, the bank read, every bank row checked (biases, metric params)
    expand.py    stage 4: conversations compiled, units formed, rows expanded (shared turns keyed)
    score/       `spec score` (outputs.py), `--cells` (cells.py); report.py is `spec report`
    plan.py      `spec plan`: the variances of Table 1's Δn, δ and Δb
    generator.py, generate.py   the `generator` block and `spec generate` (bank turns judged by a jury)
"""

from __future__ import annotations

from spec_audits.families.cognitive_bias.check import ANALYSIS, CLAUSES, CONDITIONS, resolve_bias
from spec_audits.families.cognitive_bias.clauses import SYNTAX
from spec_audits.families.cognitive_bias.expand import prepare_bias
from spec_audits.families.cognitive_bias.generator import resolve_generator
from spec_audits.sdk import Family, Form, TableKind, imported, lazy

FAMILY = Family(
    name=ANALYSIS,
    title="conditional-bias",
    clauses=CLAUSES,
    syntax=SYNTAX,
    answers=(Form("numbered", "numbered arm.options"),),  # the bank shows "Option N" and the extraction reads N
    conditions=tuple(Form(name, f"{name}(CONVERSATION, NAME = row.COLUMN, ...) [shared]") for name in CONDITIONS),
    analysis_options=(Form("params", "params COLUMN"), Form("target", "target COLUMN"), Form("human", "human COLUMN"),
                      Form("matrix_order", 'matrix_order "A|B|..."'), Form("psm_covariates", 'psm_covariates "a|b"'),
                      Form("scm_covariates", 'scm_covariates "a|b"'), Form("did", "did abs | authors")),
    check=resolve_bias,
    prepare=prepare_bias,
    score=lazy("spec_audits.families.cognitive_bias.score.outputs", "score"),
    score_runs=lazy("spec_audits.families.cognitive_bias.score.outputs", "score_runs"),
    report=lazy("spec_audits.families.cognitive_bias.report", "bias_report"),
    variances=lazy("spec_audits.families.cognitive_bias.plan", "variances"),
    docs="docs/cognitive-bias.md",
    tables=(TableKind("cells", "a per-cell table",
                      "Re-score a published per-cell table of a conditional-bias audit (docs/cognitive-bias.md): what "
                      "cell moments determine; DiD, SCM, matched PSM and the mixed model need per-row data.",
                      lazy("spec_audits.families.cognitive_bias.score.cells", "score_cells")),),
    check_generator=resolve_generator,
    generate=lazy("spec_audits.families.cognitive_bias.generate", "generate"),
    analysis_record=imported("spec_audits.families.cognitive_bias.record", "BiasRecord"),
)
