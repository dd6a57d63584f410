"""Stage 2: the typed AST. Every node carries the span of the spec text it came from.

A node is immutable, built by keyword and compared by value, like a frozen dataclass; its class is a record
(spec_audits/base/records.py), a plain class whose fields are read from its annotations. The 34 node classes as
pydantic models cost `spec check` 50 ms of CPU (class creation and schema building), as frozen dataclasses 17 ms
(each generates and compiles its methods), as plain classes about 2 ms.
"""

from __future__ import annotations

from typing import ClassVar, Literal, dataclass_transform

from spec_audits.base.records import Record, field
from spec_audits.base.records import replaced as replaced  # the AST's callers write n.replaced
from spec_audits.compiler.errors import Span

Scalar = str | int | float
Role = Literal["user", "assistant"]
PuzzleArgs = tuple[Scalar | tuple[Scalar, ...], ...]  # a puzzle clause's values, as its shape reads them


@dataclass_transform(kw_only_default=True, frozen_default=True, field_specifiers=(field,))
class Node(Record):
    """Every node of the AST: a frozen record (spec_audits/base/records.py) built by keyword, compared and
    hashed by value. Type checkers read the classes below as frozen, keyword-only dataclasses."""

    _kw_only_default: ClassVar[bool] = True

    span: Span


class Text(Node):
    """A string literal; `body_line` is the spec line of the text's first line (for template errors)."""

    value: str
    body_line: int
    indent: int = 0  # columns removed by dedenting a triple-quoted text


class Ref(Node):
    """A name that refers to something declared elsewhere in the spec."""

    name: str


# ---- expressions ----------------------------------------------------------
class Name(Node):
    parts: tuple[str, ...]

    @property
    def dotted(self) -> str:
        return ".".join(self.parts)


class Literal_(Node):
    value: Scalar


class Compare(Node):
    left: Expr
    op: str
    right: Expr


class BoolOp(Node):
    op: Literal["and", "or"]
    operands: tuple[Expr, ...]


class Not(Node):
    operand: Expr


Expr = Name | Literal_ | Compare | BoolOp | Not


# ---- header and vocabulary ------------------------------------------------
class Level(Node):
    group: str | None
    name: str
    forms: dict[str, str]


class Factor(Node):
    name: str
    levels: tuple[Level, ...]


class TemplateDef(Node):
    """A named text: `template` or `system` (kind says which)."""

    kind: Literal["template", "system"]
    name: str
    text: Text


class Position(Node):
    kind: Literal["system", "prepend", "append", "after_line", "turns", "unknown"]
    line: int | None = None
    count: int | None = None
    template: Ref | None = None
    where: Expr | None = None
    answer: Expr | None = None
    unknown: str | None = None


class Influence(Node):
    name: str
    position: Position
    brackets: tuple[str, str] | None
    text: Text | None
    joiner: Text | None = None  # prepend/append: what separates cue and prompt (default a blank line)


class DataSource(Node):
    name: str
    path: Text
    key: tuple[str, ...] = ()  # the columns whose values together identify a row
    where: Expr | None = None
    sample: int | None = None
    sample_per: str | None = None
    sample_seed: int | None = None
    mapping: dict[str, str] = field(default_factory=dict)
    min_count: tuple[int, tuple[str, ...]] | None = None  # drop rows with a rare value until none is rare
    # column -> format its text is parsed as (test_case, pydict, json)
    parse: dict[str, str] = field(default_factory=dict)


class Turn(Node):
    role: Role
    text: Text | None = None
    template: Ref | None = None
    generate: bool = False
    decode: tuple[Option, ...] = ()  # decode settings of a generated turn, over the design's
    prompt: bool = False  # `user prompt`: the design's own prompt goes here
    answer: Ref | None = None  # `assistant answer NAME [FORM]`: a generated turn whose reply is an answer
    answer_form: AnswerSpec | None = None  # its own answer form (the design's when absent)
    push: str | int | float | None = None  # `user "..." push other | same | "TOKEN"`: the option the turn pushes toward


class Conversation(Node):
    name: str
    turns: tuple[Turn, ...]


class JudgeDef(Node):
    labels: tuple[str, ...]
    model: str | None = None
    prompt: Text | None = None
    reply: Ref | None = None  # label (the default) | json


class FollowUpDef(Node):
    name: str
    text: Text
    decode: tuple[Option, ...] = ()  # settings of this turn over the row's (e.g. a longer max_tokens)
    judge: JudgeDef | None = None


class PuzzleClause(Node):
    """One clause of a puzzle block, kept generic: the puzzle pass interprets it."""

    keyword: str
    args: PuzzleArgs


class PuzzleDef(Node):
    name: str
    clauses: tuple[PuzzleClause, ...]


class Block(Node):
    """A top-level block a package declares, `KEYWORD NAME: clause...` (compiler/clauses.py)."""

    keyword: str
    name: str
    clauses: tuple[Clause, ...]

    def get(self, keyword: str) -> Clause | None:
        return next((c for c in self.clauses if c.keyword == keyword), None)


class GeneratorDef(Node):
    """A `generator` block; its clauses keep their spans, and the family that runs it checks them."""

    name: str
    clauses: tuple[Clause, ...]

    def get(self, keyword: str) -> Clause | None:
        return next((c for c in self.clauses if c.keyword == keyword), None)


# ---- designs ----------------------------------------------------------------
class Selection(Node):
    names: tuple[Ref, ...] | None  # None means '*'


class ConditionRef(Node):
    name: str
    toward: str | None = None
    args: tuple[Scalar, ...] = ()
    # `turn = row.human_message`: a name the condition's conversation reads
    bindings: dict[str, Name] = field(default_factory=dict)
    shared: bool = False

    @property
    def key(self) -> str:
        return f"toward_{self.toward}" if self.toward else self.name


class SizeAxis(Node):
    name: str
    low: int
    high: int


class Samples(Node):
    count: int
    split_by: str | None = None


class AnswerSpec(Node):
    kind: Literal["choice", "labels", "options", "yesno", "scale", "number", "solution", "numbered", "lettered"]
    tokens: tuple[str, ...] = ()
    source: Name | None = None  # numbered/lettered: the per-row list of options the tokens number
    low: int | None = None
    high: int | None = None
    puzzle: Ref | None = None


class Axis(Node):
    name: str
    count: int | None = None
    values: tuple[Scalar, ...] = ()


class Probe(Node):
    name: str
    variable: str
    first: Scalar
    last: Scalar
    answer: AnswerSpec
    restating: tuple[str, ...] = ()  # extra fields the reply must give beside the answer


class Option(Node):
    name: str
    value: Scalar


class Clause(Node):
    """One design clause; `keyword` names it and `value` holds its parsed content."""

    keyword: str
    value: object


class Design(Node):
    name: str
    clauses: tuple[Clause, ...]
    damaged: bool = False  # a clause of it was a syntax error (compiler/recover.py): its family checks wait

    def get(self, keyword: str) -> Clause | None:
        return next((c for c in self.clauses if c.keyword == keyword), None)


class Header(Node):
    name: str
    title: str | None = None


class Spec(Node):
    """A whole spec file (imports already merged in by the loader)."""

    file: str
    header: Header | None = None
    version: str | None = None
    seed: int | None = None
    description: str | None = None
    citation: str | None = None
    imports: tuple[Text, ...] = ()
    factors: tuple[Factor, ...] = ()
    texts: tuple[TemplateDef, ...] = ()
    influences: tuple[Influence, ...] = ()
    data: tuple[DataSource, ...] = ()
    conversations: tuple[Conversation, ...] = ()
    followups: tuple[FollowUpDef, ...] = ()
    puzzles: tuple[PuzzleDef, ...] = ()
    generators: tuple[GeneratorDef, ...] = ()
    designs: tuple[Design, ...] = ()
    blocks: tuple[Block, ...] = ()  # blocks of other keywords a family declares; its checks read them
