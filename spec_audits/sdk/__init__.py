"""The public API for design families: everything a family needs, from one module (docs/families.md).

A family, built in or installed from a distribution of its own through the `spec_audits.families` entry
point, imports from here and from its own folder only; what is not named here is internal and may change.
The package ships a `py.typed` marker, so a plug-in is type-checked against these names;
`spec_audits/examples/echo.py` is the worked example.

    the family record     Family, Form, TableKind, Importer, lazy, imported, DesignContext, AnalysisRecord
    records               Record, field (dataclasses without their cost), replaced (`replaced(FAMILY, name=...)`)
    its own clauses       ClauseSpec, Shape, Builder, Leaf, ShapeError, Syntax and the shape library (Name, ...)
    what its checks get   TypedDesign, nodes (the typed AST: Ref, Text, Design, ...), Span, ErrorCollector
    templates             compile_text, check_render, CompiledText (sandboxed, strict undefined)
    data sources          read_rows, key_of, Row
    what emit reads       CompiledDesign (Compiled: its plain fields, to extend), PlannedDesign, Plan, spread,
                          OwnAnalysis and PER_DESIGN (analysis keys each design of a suite may have its own)
    answer readers        parse_answer, parse_answer_line, parse_option_number, parse_judge_json
    recorded fields       Reader (a row's `read`: a stated confidence, ...), read_fields
    its scorer            read_results, read_run, read_suite, ResultRow, RunInfo, Suite, ScoreInputError
    its report            Document, Heading, Paragraph, Table, Image (drawn when the report is written),
                          pyplot (matplotlib, loaded by the first plot drawn)
    shared statistics     hypothesis, intervals, multiple, paired, position, power (spec_audits.stats): the
                          tests, intervals, multiple comparisons and power every family and the runner share

and, below these, the rest of what the built-in families use (their statistics helpers, output writers, the
puzzles, ...), each name imported on first use: `from spec_audits.sdk import Family` loads the family
interface and nothing else.
"""

from __future__ import annotations

import importlib
import re
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from spec_audits.base.records import Record, field, replaced
    from spec_audits.base.safe_files import (
        DOCUMENT_BYTES,
        open_regular,
        present,
        read_bytes_capped,
    )
    from spec_audits.compiler import clauses, nodes
    from spec_audits.compiler.check import (
        Domain,
        Tables,
        check_domains,
        checked_decode,
        is_number,
        is_whole,
    )
    from spec_audits.compiler.clauses import (
        Answer,
        Args,
        Builder,
        ClauseSpec,
        Conditions,
        Counted,
        Crossing,
        Expression,
        Name,
        NameOptions,
        Names,
        NameThen,
        Number,
        NumberThenNames,
        Options,
        Ranges,
        Selection,
        Shape,
        Syntax,
        Text,
        Texts,
        Values,
        Whole,
    )
    from spec_audits.compiler.conversations import cell_keys
    from spec_audits.compiler.data_parse import (
        option_lines,
        test_case_text,
    )
    from spec_audits.compiler.data_source import (
        Row,
        first_key,
        key_of,
        read_rows,
    )
    from spec_audits.compiler.errors import (
        Diagnostic,
        ErrorCollector,
        Span,
        SpecError,
        did_you_mean,
        report_repeats,
    )
    from spec_audits.compiler.expr import (
        evaluate,
        names,
        resolves,
    )
    from spec_audits.compiler.family import (
        PER_DESIGN,
        Compiled,
        CompiledDesign,
        OwnAnalysis,
        Plan,
        PlannedDesign,
        spread,
    )
    from spec_audits.compiler.leaf import (
        Leaf,
        ShapeError,
    )
    from spec_audits.compiler.sandbox import environment
    from spec_audits.compiler.template_shapes import (
        Items,
        record,
    )
    from spec_audits.compiler.template_shapes import Shape as TemplateShape
    from spec_audits.compiler.templates import (
        CompiledText,
        check_attributes,
        check_render,
        check_slots,
        compile_text,
        render_with_slots,
    )
    from spec_audits.compiler.typed_design import TypedDesign
    from spec_audits.contract.analysis_record import (
        CLOSED,
        AnalysisRecord,
        cell_problem,
        domain,
        listed_twice,
        one_of,
        row_contradicts,
        shown,
        tokens_problem,
    )
    from spec_audits.contract.reader import (
        DAMAGED_RESULTS,
        RESULTS_FILE,
        RUN_FILE,
        SUITE_FILE,
        ContractError,
        Suite,
        SuiteHead,
        complete_lines,
        iter_numbered_results,
        read_manifest,
        read_run,
        read_run_info,
        read_suite,
        scan_run,
        suite_dir_of,
    )
    from spec_audits.contract.results_model import (
        ResultRow,
        RunInfo,
    )
    from spec_audits.contract.seeding import (
        canonical_json,
        item_rng,
    )
    from spec_audits.contract.suite_model import EXTRACTION_SLOT, Balance, Manifest, Message, Reader, SuiteRow
    from spec_audits.contract.suite_terms import FOLLOWUP_SLOTS, JUDGE_SLOTS, SOLUTION_OUTCOMES
    from spec_audits.contract.writer import (
        suite_row,
        write_suite_folder,
    )
    from spec_audits.local.names import is_local
    from spec_audits.puzzles import (
        PropositionalConfig,
        PuzzleConfig,
        PuzzleError,
        Skeleton,
        draw_selections,
        expect_of,
        generate_puzzle,
        generate_skeleton,
        generate_zebra,
        instantiate,
        reuse_groups,
    )
    from spec_audits.puzzles.answers import (
        SOLUTION_FORMAT,
        SOLVED,
    )
    from spec_audits.puzzles.block import puzzle_config
    from spec_audits.puzzles.clues import Binary
    from spec_audits.puzzles.propositional import Selection as PuzzleSelection
    from spec_audits.puzzles.styled import (
        one_person_compound,
        states_identity,
    )
    from spec_audits.puzzles.validate import parse_cell
    from spec_audits.runner.answers import (
        parse_answer,
        parse_answer_line,
        parse_judge_json,
        parse_option_number,
        read_fields,
    )
    from spec_audits.runner.call import (
        CallSettings,
        ModelClient,
    )
    from spec_audits.runner.files_out import (
        read_csv,
        replacing,
        score_folder,
        write_bytes,
        write_csv,
        write_csv_rows,
        write_figure,
        write_json,
        write_text,
    )
    from spec_audits.runner.imported import (
        ImportedRun,
        ImportInputError,
        json_lines,
        write_runs,
    )
    from spec_audits.runner.puzzle_scores import (
        accuracy_by_band,
        solved_table,
    )
    from spec_audits.runner.report import fmt
    from spec_audits.runner.report.comparisons import comparison_blocks
    from spec_audits.runner.report.document import (
        Block,
        Document,
        Heading,
        Image,
        Paragraph,
        Table,
    )
    from spec_audits.runner.report.plotting import (
        NO_DATA,
        cannot_draw,
        no_data_background,
        pyplot,
        text_colour,
    )
    from spec_audits.runner.result_checks import (
        CodedMeanings,
        check_result_columns,
        read_checked_run,
    )
    from spec_audits.runner.run_columns import (
        Codes,
        ResultCodes,
        SuiteIds,
        unmap_freed_arrays,
    )
    from spec_audits.runner.score_input import (
        ScoreInputError,
        check_run_analysis,
        check_study_runs,
        read_score_folder,
        refuse_repeats,
        repeated,
        require_answers,
    )
    from spec_audits.runner.score_input import scored_results as read_results  # a repeated (item, sample) refused
    from spec_audits.runner.services.cache import (
        NoCache,
        ResponseCache,
        default_cache_path,
    )
    from spec_audits.runner.study import expand_runs
    from spec_audits.runner.suite_columns import (
        IdLookup,
        SuiteCodes,
        SuiteColumns,
        id_keys,
    )
    from spec_audits.runner.turn_flips import (
        FlipInputError,
        at_turn,
        flip_rates,
        pairs,
    )
    from spec_audits.sdk.interface import (
        DesignContext,
        Family,
        Form,
        Importer,
        TableKind,
        imported,
        lazy,
    )
    from spec_audits.stats import hypothesis, intervals, multiple, paired, position, power
    from spec_audits.stats.hypothesis import sign_test
    from spec_audits.stats.intervals import (
        Fit,
        ols_cluster,
        ols_cluster_summed,
        sandwich,
        wilson,
        wilson_one,
    )
    from spec_audits.stats.multiple import (
        bh_adjust,
        bh_within,
    )
    from spec_audits.stats.paired import (
        Estimate,
        compare_models,
        contrast_influence,
        mean_influence,
        ties,
    )
    from spec_audits.stats.position import position_bias
    from spec_audits.stats.power import (
        PILOT,
        Assumed,
        Pilot,
        Variance,
        from_one_arm,
        from_pilot,
        pilot_spread,
    )


_FROM = re.compile(r"from\s+([\w.]+)\s+import\s+(\([^)]*\)|[^\n]*)")  # `from M import A, B as C` or `(...)`
_ALIAS = re.compile(r"(\w+)(?:\s+as\s+(\w+))?")


@cache
def _home() -> dict[str, tuple[str, str]]:
    """Each name of the API -> (its module, its name there), read from the imports above: one list. Scanned as text,
    comments left out (parsing the whole module with `ast` was 10M instructions of every `spec check`);
    tests/test_sdk.py checks it against the parsed imports."""
    text = Path(__file__).read_text(encoding="utf-8")
    block = re.sub(r"#[^\n]*", "", text[text.index("\nif TYPE_CHECKING:"):text.index("\n@cache")])
    return {alias or name: (module, name) for module, names in _FROM.findall(block)
            for name, alias in _ALIAS.findall(names)}


__all__ = [
    "AnalysisRecord", "Answer", "Assumed", "Args", "Balance", "Binary", "Block", "Builder", "CallSettings",
    "ClauseSpec", "CLOSED", "Compiled", "CompiledDesign", "CompiledText", "Conditions", "ContractError", "Counted",
    "Crossing", "DAMAGED_RESULTS", "DesignContext", "Diagnostic", "Document", "DOCUMENT_BYTES", "Domain",
    "ErrorCollector", "Estimate", "Expression", "EXTRACTION_SLOT", "Family", "Fit", "FlipInputError", "FOLLOWUP_SLOTS",
    "Form", "Heading", "Image", "ImportedRun", "Importer", "ImportInputError", "Items", "JUDGE_SLOTS", "Leaf",
    "Manifest", "Message", "ModelClient", "Name", "NameOptions", "Names", "NameThen", "NO_DATA", "NoCache", "Number",
    "NumberThenNames", "Options", "OwnAnalysis", "Paragraph", "PER_DESIGN", "PILOT", "Pilot", "Plan", "PlannedDesign",
    "PropositionalConfig", "PuzzleConfig", "PuzzleError", "CodedMeanings", "IdLookup", "SuiteCodes", "id_keys",
    "PuzzleSelection", "Ranges", "Reader", "ResponseCache", "ResultRow", "RESULTS_FILE", "Row", "RUN_FILE", "RunInfo",
    "ScoreInputError", "Selection", "Shape", "ShapeError", "Skeleton", "SOLUTION_FORMAT", "SOLUTION_OUTCOMES", "SOLVED",
    "Span", "SpecError", "Suite", "SUITE_FILE", "SuiteColumns", "SuiteHead", "SuiteRow", "Syntax", "Table", "TableKind",
    "Tables", "TemplateShape", "Text", "Texts", "TypedDesign", "Values", "Variance", "Whole", "accuracy_by_band",
    "at_turn", "bh_adjust", "bh_within", "cannot_draw", "canonical_json", "cell_keys", "cell_problem",
    "check_attributes", "check_domains", "check_render", "check_result_columns", "check_run_analysis", "check_slots",
    "check_study_runs", "checked_decode", "clauses", "compare_models", "comparison_blocks", "compile_text",
    "complete_lines", "contrast_influence", "default_cache_path", "did_you_mean", "domain", "draw_selections",
    "environment", "evaluate", "expand_runs", "field", "expect_of", "first_key", "flip_rates", "fmt", "from_one_arm",
    "from_pilot", "generate_puzzle", "generate_skeleton", "generate_zebra", "hypothesis", "instantiate", "intervals",
    "is_local", "is_number", "is_whole", "imported", "item_rng", "json_lines", "key_of", "lazy", "listed_twice",
    "mean_influence", "multiple", "names", "no_data_background", "nodes", "ols_cluster", "ols_cluster_summed", "one_of",
    "one_person_compound", "open_regular", "option_lines", "paired", "pairs", "parse_answer", "parse_answer_line",
    "parse_cell", "parse_judge_json", "parse_option_number", "pilot_spread", "position", "position_bias", "power",
    "present", "puzzle_config", "pyplot", "read_bytes_capped", "read_checked_run", "read_csv", "read_fields",
    "read_results", "read_rows", "read_run", "read_score_folder", "refuse_repeats", "repeated", "read_suite", "Record",
    "record", "render_with_slots", "replaced", "replacing", "report_repeats", "require_answers", "resolves",
    "reuse_groups", "row_contradicts", "sandwich", "scan_run", "score_folder", "shown", "sign_test", "solved_table",
    "spread", "states_identity", "suite_row", "test_case_text", "text_colour", "ties", "tokens_problem", "wilson",
    "wilson_one", "write_bytes", "write_csv", "write_csv_rows", "write_figure", "write_json", "write_runs",
    "write_suite_folder", "write_text", "Codes", "ResultCodes", "SuiteIds", "iter_numbered_results", "read_manifest",
    "read_run_info", "suite_dir_of", "unmap_freed_arrays",
]


def __getattr__(name: str) -> Any:
    """A name of the API, its module imported on first use: importing the SDK costs nothing, and a family
    pays only for what it uses (`spec check` of a spec that names it loads no scorer, no plotting)."""
    if name not in _home():
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    module, original = _home()[name]
    try:
        return getattr(importlib.import_module(module), original)
    except AttributeError:  # a module of the API (nodes, clauses, fmt), not imported yet
        return importlib.import_module(f"{module}.{original}")
