"""Stage 2, continued: the design statements and declared blocks of the parse tree -> typed AST.

The base of compiler/tree_to_ast.py:ToAst, with the readings of tokens both use. A design clause is built
by the shape its declaration gives (compiler/clauses.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from lark import Token, Transformer, v_args

from spec_audits.compiler import nodes as n
from spec_audits.compiler.ast_values import number, scalar, token_span
from spec_audits.compiler.clauses import Syntax
from spec_audits.compiler.errors import ErrorCollector, Span


@dataclass(frozen=True)
class Leaves:
    """The AST stage's reading of tokens, as a clause's shape asks for it (compiler/clauses.py Builder)."""

    file: str
    errors: ErrorCollector

    def ref(self, token: Token) -> n.Ref:
        return n.Ref(span=token_span(token, self.file), name=str(token))

    def whole(self, token: Token) -> int:
        """A NUMBER that must be a whole number; a fraction is reported and truncated so checking goes on."""
        value = number(token)
        if isinstance(value, float):
            self.errors.add(token_span(token, self.file), f"expected a whole number here, got {token}")
        return int(value)


@v_args(meta=True)
class GeneratorsAndDesigns(Transformer):
    """Transformer methods of the declared clauses and blocks, and of the design rules' building blocks."""

    def __init__(self, file: str, errors: ErrorCollector, syntax: Syntax) -> None:
        super().__init__()
        self.file = file
        self.errors = errors
        self._leaves = Leaves(file, errors)
        self._clauses = {(spec.block, spec.keyword): spec for spec in syntax}

    def _span(self, meta: Any) -> Span:
        if getattr(meta, "empty", True):
            return Span(self.file, 1, 1)
        return Span(self.file, meta.line, meta.column, meta.end_line, meta.end_column)

    def _ref(self, token: Token) -> n.Ref:
        return self._leaves.ref(token)

    def _whole(self, token: Token) -> int:
        return self._leaves.whole(token)

    # ---- designs -----------------------------------------------------------------
    def design_decl(self, meta: Any, children: list[Any]) -> tuple[str, Any]:
        return ("design", n.Design(span=self._span(meta), name=str(children[0]), clauses=tuple(children[1:])))

    def __default__(self, data: Any, children: list[Any], meta: Any) -> Any:
        """The rules of declared clauses and blocks (compiler/clauses.py clause_rules): a clause's shape
        builds its typed value; a block is (its keyword, a Block)."""
        rule = str(data)
        if rule.startswith("clause_"):
            return self._clauses["design", rule.removeprefix("clause_")].build(self._leaves, self._span(meta), children)
        if rule.startswith("bclause_"):
            block, keyword = rule.removeprefix("bclause_").split("__")
            return self._clauses[block, keyword].build(self._leaves, self._span(meta), children)
        if rule.startswith("block_"):
            keyword = rule.removeprefix("block_")
            return (keyword, n.Block(span=self._span(meta), keyword=keyword, name=str(children[0]),
                                     clauses=tuple(children[1:])))
        return super().__default__(data, children, meta)

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
        low, high = self._whole(c[0]), self._whole(c[1])
        return n.AnswerSpec(span=self._span(meta), kind="scale", low=low, high=high)

    def ans_solution(self, meta: Any, c: list[Token]) -> n.AnswerSpec:
        return n.AnswerSpec(span=self._span(meta), kind="solution", puzzle=self._ref(c[0]))

    def ans_numbered(self, meta: Any, c: list[n.Name]) -> n.AnswerSpec:
        return n.AnswerSpec(span=self._span(meta), kind="numbered", source=c[0])

    def ans_lettered(self, meta: Any, c: list[n.Name]) -> n.AnswerSpec:
        return n.AnswerSpec(span=self._span(meta), kind="lettered", source=c[0])

    def option(self, meta: Any, c: list[Any]) -> n.Option:
        return n.Option(span=self._span(meta), name=str(c[0]), value=scalar(c[1]))
