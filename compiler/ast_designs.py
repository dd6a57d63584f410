"""Stage 2, continued: the design statements and declared blocks of the parse tree -> typed AST.

The base of compiler/tree_to_ast.py:ToAst, with the readings of tokens both use. A design clause is built
by the shape its declaration gives (compiler/clauses.py).
"""

from __future__ import annotations

from typing import Any, Literal

from lark import Token, Transformer, v_args

from spec_audits.base.records import Record
from spec_audits.compiler import nodes as n
from spec_audits.compiler.ast_values import leaf, leaves, scalar
from spec_audits.compiler.clauses import ClauseSpec, Syntax
from spec_audits.compiler.errors import ErrorCollector, Span
from spec_audits.compiler.leaf import Leaf, ShapeError


class Leaves(Record):
    """The AST stage's reading of leaves, as a clause's shape asks for it (compiler/clauses.py Builder)."""

    errors: ErrorCollector

    def ref(self, leaf: Leaf) -> n.Ref:
        return leaf.ref()

    def whole(self, leaf: Leaf) -> int:
        """A NUMBER that must be a whole number; a fraction is reported and truncated so checking goes on."""
        try:
            return leaf.whole()
        except ShapeError as error:
            self.errors.add(error.span, error.message, error.hint)
            return int(leaf.number())


@v_args(meta=True)
class GeneratorsAndDesigns(Transformer[Token, Any]):
    """Transformer methods of the declared clauses and blocks, and of the design rules' building blocks."""

    def __init__(self, file: str, errors: ErrorCollector, syntax: Syntax) -> None:
        super().__init__()
        self.file = file
        self.errors = errors
        self._leaves = Leaves(errors)
        self._clauses = {(spec.block, spec.keyword): spec for spec in syntax}

    def _span(self, meta: Any) -> Span:
        if getattr(meta, "empty", True):
            return Span(self.file, 1, 1)
        return Span(self.file, meta.line, meta.column, meta.end_line, meta.end_column)

    def _ref(self, token: Token) -> n.Ref:
        return leaf(token, self.file).ref()

    def _whole(self, token: Token) -> int:
        return self._leaves.whole(leaf(token, self.file))

    def _clause(self, spec: ClauseSpec[Any], meta: Any, children: list[Any]) -> n.Clause | None:
        """A declared clause built by its shape from its arguments, each token made a Leaf (here only, so no
        shape sees the parser's tokens); an argument the shape cannot read is reported and the clause left out."""
        try:
            return spec.build(self._leaves, self._span(meta), leaves(children, self.file))
        except ShapeError as error:
            self.errors.add(error.span, error.message, error.hint)
            return None

    # ---- designs -----------------------------------------------------------------
    def design_decl(self, meta: Any, children: list[Any]) -> tuple[str, Any]:
        return ("design", n.Design(span=self._span(meta), name=str(children[0]), clauses=_built(children[1:])))

    def __default__(self, data: Any, children: list[Any], meta: Any) -> Any:
        """The rules of declared clauses and blocks (compiler/clauses.py clause_rules): a clause's shape
        builds its typed value; a block is (its keyword, a Block)."""
        rule = str(data)
        if rule.startswith("clause_"):
            return self._clause(self._clauses["design", rule.removeprefix("clause_")], meta, children)
        if rule.startswith("bclause_"):
            block, keyword = rule.removeprefix("bclause_").split("__")
            return self._clause(self._clauses[block, keyword], meta, children)
        if rule.startswith("block_"):
            keyword = rule.removeprefix("block_")
            return (keyword, n.Block(span=self._span(meta), keyword=keyword, name=str(children[0]),
                                     clauses=_built(children[1:])))
        return super().__default__(data, children, meta)  # type: ignore[no-untyped-call]  # lark leaves it unannotated

    def select_all(self, meta: Any, c: list[Any]) -> n.Selection:
        return n.Selection(span=self._span(meta), names=None)

    def select_names(self, meta: Any, c: list[Token]) -> n.Selection:
        return n.Selection(span=self._span(meta), names=tuple(self._ref(t) for t in c))

    def cond_toward(self, meta: Any, c: list[Token]) -> n.ConditionRef:
        return n.ConditionRef(span=self._span(meta), name="toward", toward=str(c[0]))

    def cond_named(self, meta: Any, c: list[Any]) -> n.ConditionRef:
        shared = any(isinstance(x, Token) and x.type == "SHARED" for x in c[1:])
        rest = [x for x in c[1:] if not (isinstance(x, Token) and x.type == "SHARED")]
        bindings = {k: v for x in rest if isinstance(x, dict) for k, v in x.items()}
        args = tuple(scalar(x) for x in rest if not isinstance(x, dict))
        return n.ConditionRef(span=self._span(meta), name=str(c[0]), args=args, bindings=bindings, shared=shared)

    def binding(self, meta: Any, c: list[Any]) -> dict[str, n.Name]:
        return {str(c[0]): c[1]}

    def size_axis(self, meta: Any, c: list[Token]) -> n.SizeAxis:
        return n.SizeAxis(span=self._span(meta), name=str(c[0]), low=self._whole(c[1]), high=self._whole(c[2]))

    def axis(self, meta: Any, c: list[Any]) -> n.Axis:
        count = self._whole(c[1]) if len(c) > 1 and isinstance(c[1], Token) else None
        values = c[1] if len(c) > 1 and isinstance(c[1], tuple) else ()
        return n.Axis(span=self._span(meta), name=str(c[0]), count=count, values=values)

    def probe(self, meta: Any, c: list[Any]) -> n.Probe:
        return n.Probe(span=self._span(meta), name=str(c[0]), variable=str(c[1]),
                       first=scalar(c[2]), last=scalar(c[3]), answer=c[4], restating=c[5] if len(c) > 5 else ())

    def restating(self, meta: Any, c: list[Token]) -> tuple[str, ...]:
        return tuple(str(t) for t in c)

    def ans_choice(self, meta: Any, c: list[n.Text]) -> n.AnswerSpec:
        return n.AnswerSpec(span=self._span(meta), kind="choice", tokens=tuple(t.value for t in c))

    def ans_labels(self, meta: Any, c: list[n.Text]) -> n.AnswerSpec:
        return n.AnswerSpec(span=self._span(meta), kind="labels", tokens=tuple(t.value for t in c))

    def ans_options(self, meta: Any, c: list[n.Text]) -> n.AnswerSpec:
        return n.AnswerSpec(span=self._span(meta), kind="options", tokens=tuple(t.value for t in c))

    def ans_yesno(self, meta: Any, c: list[Any]) -> n.AnswerSpec:
        return n.AnswerSpec(span=self._span(meta), kind="yesno", tokens=("yes", "no"))

    def ans_scale(self, meta: Any, c: list[Token]) -> n.AnswerSpec:
        return self._answer_range(meta, c, "scale")

    def ans_number(self, meta: Any, c: list[Token]) -> n.AnswerSpec:
        return self._answer_range(meta, c, "number")

    def _answer_range(self, meta: Any, c: list[Token], kind: Literal["scale", "number"]) -> n.AnswerSpec:
        return n.AnswerSpec(span=self._span(meta), kind=kind, low=self._whole(c[0]), high=self._whole(c[1]))

    def ans_solution(self, meta: Any, c: list[Token]) -> n.AnswerSpec:
        return n.AnswerSpec(span=self._span(meta), kind="solution", puzzle=self._ref(c[0]))

    def ans_numbered(self, meta: Any, c: list[n.Name]) -> n.AnswerSpec:
        return n.AnswerSpec(span=self._span(meta), kind="numbered", source=c[0])

    def ans_lettered(self, meta: Any, c: list[n.Name]) -> n.AnswerSpec:
        return n.AnswerSpec(span=self._span(meta), kind="lettered", source=c[0])

    def option(self, meta: Any, c: list[Any]) -> n.Option:
        return n.Option(span=self._span(meta), name=str(c[0]), value=scalar(c[1]))


def _built(clauses: list[n.Clause | None]) -> tuple[n.Clause, ...]:
    """The clauses a shape built (None: one it could not, already reported)."""
    return tuple(clause for clause in clauses if clause is not None)
