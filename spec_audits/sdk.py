"""The public API for design families: everything a family needs, from one module (docs/families.md).

A family, built in or installed from a distribution of its own through the `spec_audits.families` entry
point, imports from here and from its own folder only; what is not named here is internal and may change.
The package ships a `py.typed` marker, so a plug-in is type-checked against these names;
`spec_audits/examples/echo.py` is the worked example.

    the family record     Family, Form, TableKind, Importer, lazy, DesignContext, AnalysisRecord
    its own clauses       ClauseSpec, Shape, Builder, Syntax and the shape library (Name, Whole, Ranges, ...)
    what its checks get   TypedDesign, nodes (the typed AST: Ref, Text, Design, ...), Span, ErrorCollector
    templates             compile_text, check_render, CompiledText (sandboxed, strict undefined)
    data sources          read_rows, key_of, Row
    what emit reads       CompiledDesign, PlannedDesign, Plan, spread
    answer readers        parse_answer, parse_answer_line, parse_option_number, parse_judge_json
    recorded fields       Reader (a row's `read`: a stated confidence, ...), read_fields
    its scorer            read_results, read_run, read_suite, ResultRow, RunInfo, Suite, ScoreInputError
    its report            Document, Heading, Paragraph, Table, Image
"""

from __future__ import annotations

from spec_audits.compiler import nodes
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
from spec_audits.compiler.data_source import Row, key_of, read_rows
from spec_audits.compiler.errors import ErrorCollector, Span
from spec_audits.compiler.family import CompiledDesign, Plan, PlannedDesign, spread
from spec_audits.compiler.templates import CompiledText, check_render, compile_text
from spec_audits.compiler.typed_design import TypedDesign
from spec_audits.contract.analysis_record import AnalysisRecord
from spec_audits.contract.reader import Suite, read_results, read_run, read_suite
from spec_audits.contract.results_model import ResultRow, RunInfo
from spec_audits.contract.suite_model import Reader
from spec_audits.families.interface import DesignContext, Family, Form, Importer, TableKind, lazy
from spec_audits.runner.answers import (
    parse_answer,
    parse_answer_line,
    parse_judge_json,
    parse_option_number,
    read_fields,
)
from spec_audits.runner.report.document import Document, Heading, Image, Paragraph, Table
from spec_audits.runner.score_input import ScoreInputError

__all__ = [
    "AnalysisRecord", "Answer", "Args", "Builder", "ClauseSpec", "CompiledDesign", "CompiledText", "Conditions",
    "Counted", "Crossing", "DesignContext", "Document", "ErrorCollector", "Expression", "Family", "Form",
    "Heading", "Image", "Importer", "Name", "NameOptions", "NameThen", "Names", "Number", "NumberThenNames",
    "Options", "Paragraph", "Plan", "PlannedDesign", "Ranges", "Reader", "ResultRow", "Row", "RunInfo",
    "ScoreInputError", "Selection", "Shape", "Span", "Suite", "Syntax", "Table", "TableKind", "Text", "Texts",
    "TypedDesign", "Values", "Whole", "check_render", "compile_text", "key_of", "lazy", "nodes", "parse_answer",
    "parse_answer_line", "parse_judge_json", "parse_option_number", "read_fields", "read_results", "read_rows",
    "read_run", "read_suite", "spread",
]
