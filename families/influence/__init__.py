"""Direction-flipped influence pairs (seed 000): every comparison with no cue, a cue toward group A and
the mirror cue toward group B. docs/scoring.md defines every statistic.

    check.py     stage 3: the design's clauses resolved against the spec's factors, influences, templates
    prepare.py   stage 4: templates compiled, comparisons fixed, balance proved, a sample rendered
    expand.py    the rows: every comparison in every display order under every condition
    items.py     designs over data items (`items DATA`, DailyDilemmas): checks, templates, rows
    trials.py    `trials N per cell`: the seeded subset of every cell's trials a probe asks (either kind)
    score/       counts -> per-condition statistics -> BH-FDR -> headline summary (methods §6)
    scoring.py   `spec score` for runs (several together: a study) and published counts tables
    report.py    `spec report`: headline, breakdowns, regression, noise floor, probe labels; plots.py its figures
    choices_import.py  `spec import choices-probe | choices-conditions`: the seed-000 release's transcripts
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from spec_audits.families.influence.check import CLAUSES, PairsDesign, resolve_pairs
from spec_audits.families.influence.clauses import ITEMS, ITEMS_CLAUSES, SYNTAX
from spec_audits.families.influence.prepare import prepare
from spec_audits.families.influence.score_options import SCORE_FLAGS
from spec_audits.sdk import (
    CompiledDesign,
    DesignContext,
    ErrorCollector,
    Family,
    Form,
    Importer,
    TableKind,
    TypedDesign,
    imported,
    lazy,
)

if TYPE_CHECKING:  # a design over data items loads them (`items DATA`): a size-pair design never does
    from spec_audits.families.influence.items import ItemsDesign


def _check(design: TypedDesign, context: DesignContext, errors: ErrorCollector) -> PairsDesign | ItemsDesign | None:
    """Size-pair designs, or item designs when the design draws its stimuli from data (`items DATA`)."""
    if design.get(ITEMS) is None:
        return resolve_pairs(design, context, errors)
    from spec_audits.families.influence.items import resolve_items

    return resolve_items(design, context, errors)


def _prepare(design: Any, seed: int, errors: ErrorCollector) -> CompiledDesign | None:
    if isinstance(design, PairsDesign):
        return prepare(design, seed, errors)
    from spec_audits.families.influence.items import prepare_items

    return prepare_items(design, seed, errors)


FAMILY = Family(
    name="influence_pairs",
    syntax=SYNTAX,
    title="influence-pairs",
    clauses=tuple(dict.fromkeys(CLAUSES + ITEMS_CLAUSES)),
    answers=(Form("labels", 'labels "A" | "B"'), Form("options", 'options "yes" | "no"'),
             Form("choice", 'choice "A" | "B"')),
    conditions=(Form("baseline", "baseline [shared]"), Form("toward", "toward A, toward B")),
    analysis_options=(Form("alpha", "alpha X"), Form("bootstrap", "bootstrap N"), Form("benchmark", "benchmark NAME"),
                      Form("fdr", "fdr bh"), Form("fdr_by", "fdr_by benchmark"), Form("exclude", "exclude LEVEL"),
                      Form("reasoning", "reasoning NAME")),
    check=_check,
    prepare=_prepare,
    score=lazy("spec_audits.families.influence.scoring", "score_run"),
    report=lazy("spec_audits.families.influence.report", "influence_report"),
    score_flags=SCORE_FLAGS,
    docs="docs/scoring.md",
    tables=(TableKind("counts", "a counts table",
                      "Score a counts table (docs/suite-format.md, \"Counts tables\") instead of a run folder.",
                      lazy("spec_audits.families.influence.scoring", "score_table")),),
    score_runs=lazy("spec_audits.families.influence.scoring", "score_runs"),
    importers=(
        Importer("choices-probe", "seed 000's released follow-up-probe transcripts (JSON lines) -> a probe run",
                 lazy("spec_audits.families.influence.choices_import", "import_probe")),
        Importer("choices-conditions", "seed 000's released per-condition summary CSV -> a parent for --parent",
                 lazy("spec_audits.families.influence.choices_import", "import_conditions")),
    ),
    analysis_record=imported("spec_audits.families.influence.record", "InfluenceRecord"),
    variances=lazy("spec_audits.families.influence.plan", "variances"),
)
