"""Stage 2: lark parse tree -> typed AST (one transformer method per grammar rule)."""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from typing import Any, cast

from lark import Token, Tree, v_args
from lark.exceptions import GrammarError, VisitError
from lark.visitors import _vargs_meta, _VArgsWrapper

from spec_audits.compiler import nodes as n
from spec_audits.compiler.ast_designs import GeneratorsAndDesigns
from spec_audits.compiler.ast_values import scalar
from spec_audits.compiler.clauses import Syntax
from spec_audits.compiler.errors import ErrorCollector, Span, report_repeats
from spec_audits.compiler.leaf import parse_number, unquote

DataClause = tuple[str, dict[str, Any], Span]  # keyword, the DataSource fields it sets, where


@v_args(meta=True)
class ToAst(GeneratorsAndDesigns):
    """Builds AST nodes; the top-level `start` returns the list of statements."""

    def _call_userfunc(self, tree: Tree[Token], new_children: list[Any] | None = None) -> Any:
        """lark's: a rule's method called with the node's meta and children (v_args(meta=True)), its errors
        raised as VisitError; but without lark's binding a new wrapper, and copying the method's name and doc
        into it (functools.update_wrapper), for each node: a fifth of building the AST."""
        method = _meta_methods(type(self)).get(tree.data)
        if method is None:  # a declared clause or block: __default__, as lark calls it
            return super()._call_userfunc(tree, new_children)  # type: ignore[no-untyped-call]  # lark's, unannotated
        children = new_children if new_children is not None else tree.children
        try:
            return method(self, tree.meta, children)
        except GrammarError:
            raise
        except Exception as e:
            raise VisitError(tree.data, tree, e)  # type: ignore[no-untyped-call]  # noqa: B904 - as lark raises it

    # ---- literals ----------------------------------------------------------
    def text(self, meta: Any, children: list[Token]) -> n.Text:
        token = children[0]
        # a parsed token has its line; lark types it optional
        value, first_line, indent = unquote(str(token), token.type, cast(int, token.line))
        return n.Text(span=self._span(meta), value=value, body_line=first_line, indent=indent)

    def value_list(self, meta: Any, children: list[Any]) -> tuple[n.Scalar, ...]:
        return tuple(scalar(c) for c in children)

    # ---- statements ------------------------------------------------------------
    def start(self, meta: Any, children: list[Any]) -> list[Any]:
        return children

    def suite_decl(self, meta: Any, children: list[Any]) -> tuple[str, Any]:
        title = children[1].value if len(children) > 1 else None
        return ("header", n.Header(span=self._span(meta), name=str(children[0]), title=title))

    def version_decl(self, meta: Any, children: list[Any]) -> tuple[str, Any]:
        return ("version", (self._span(meta), children[0].value))

    def seed_decl(self, meta: Any, children: list[Any]) -> tuple[str, Any]:
        return ("seed", (self._span(meta), self._whole(children[0])))

    def description_decl(self, meta: Any, children: list[Any]) -> tuple[str, Any]:
        return ("description", (self._span(meta), children[0].value))

    def citation_decl(self, meta: Any, children: list[Any]) -> tuple[str, Any]:
        return ("citation", (self._span(meta), children[0].value))

    def import_decl(self, meta: Any, children: list[Any]) -> tuple[str, Any]:
        return ("import", children[0])

    def factor_decl(self, meta: Any, children: list[Any]) -> tuple[str, Any]:
        levels = tuple(children[1:])
        return ("factor", n.Factor(span=self._span(meta), name=str(children[0]), levels=levels))

    def level(self, meta: Any, children: list[Any]) -> n.Level:
        names = [c for c in children if isinstance(c, Token)]
        texts = [c for c in children if isinstance(c, n.Text)]
        extra = next((c for c in children if isinstance(c, dict)), {})
        group, name = (str(names[0]), str(names[1])) if len(names) == 2 else (None, str(names[0]))
        forms = {"plural": texts[0].value}
        if len(texts) > 1:
            forms["singular"] = texts[1].value
        forms.update(extra)
        return n.Level(span=self._span(meta), group=group, name=name, forms=forms)

    def form_list(self, meta: Any, children: list[tuple[str, str, Span]]) -> dict[str, str]:
        report_repeats(((name, span) for name, _, span in children), "form", self.errors)
        return {name: value for name, value, _ in reversed(children)}

    def form(self, meta: Any, children: list[Any]) -> tuple[str, str, Span]:
        return (str(children[0]), children[1].value, self._span(meta))

    def system_decl(self, meta: Any, children: list[Any]) -> tuple[str, Any]:
        return ("text", n.TemplateDef(span=self._span(meta), kind="system", name=str(children[0]), text=children[1]))

    def template_decl(self, meta: Any, children: list[Any]) -> tuple[str, Any]:
        node = n.TemplateDef(span=self._span(meta), kind="template", name=str(children[0]), text=children[1])
        return ("text", node)

    # ---- influences ----------------------------------------------------------
    def influence_decl(self, meta: Any, children: list[Any]) -> tuple[str, Any]:
        position = children[1]
        brackets = next((c for c in children[2:] if isinstance(c, tuple)), None)
        text = next((c for c in children[2:] if isinstance(c, n.Text)), None)
        joiner = next((c["joiner"] for c in children[2:] if isinstance(c, dict)), None)
        node = n.Influence(span=self._span(meta), name=str(children[0]), position=position,
                           brackets=brackets, text=text, joiner=joiner)
        return ("influence", node)

    def pos_system(self, meta: Any, children: list[Any]) -> n.Position:
        return n.Position(span=self._span(meta), kind="system")

    def pos_prepend(self, meta: Any, children: list[Any]) -> n.Position:
        return n.Position(span=self._span(meta), kind="prepend")

    def pos_append(self, meta: Any, children: list[Any]) -> n.Position:
        return n.Position(span=self._span(meta), kind="append")

    def pos_after_line(self, meta: Any, children: list[Any]) -> n.Position:
        return n.Position(span=self._span(meta), kind="after_line", line=self._whole(children[0]))

    def pos_turns(self, meta: Any, children: list[Any]) -> n.Position:
        where = children[2] if len(children) == 4 else None
        return n.Position(span=self._span(meta), kind="turns", count=self._whole(children[0]),
                          template=self._ref(children[1]), where=where, answer=children[-1])

    def pos_unknown(self, meta: Any, children: list[Any]) -> n.Position:
        return n.Position(span=self._span(meta), kind="unknown", unknown=str(children[0]))

    def joiner(self, meta: Any, children: list[n.Text]) -> dict[str, n.Text]:
        return {"joiner": children[0]}

    def bracket(self, meta: Any, children: list[n.Text]) -> tuple[str, str]:
        return (children[0].value, children[1].value) if children else ("(", ")")

    # ---- data, conversations, follow-ups -------------------------------------------
    def data_decl(self, meta: Any, children: list[Any]) -> tuple[str, Any]:
        fields: dict[str, Any] = {}
        report_repeats(((keyword, span) for keyword, _, span in children[2:]), "data clause", self.errors)
        for _, clause, _ in children[2:]:
            fields = clause | fields
        node = n.DataSource(span=self._span(meta), name=str(children[0]), path=children[1], **fields)
        return ("data", node)

    def data_key(self, meta: Any, children: list[Any]) -> DataClause:
        return ("key", {"key": tuple(str(c) for c in children)}, self._span(meta))

    def data_where(self, meta: Any, children: list[Any]) -> DataClause:
        return ("where", {"where": children[0]}, self._span(meta))

    def data_sample(self, meta: Any, children: list[Any]) -> DataClause:
        out: dict[str, Any] = {"sample": self._whole(children[0])}
        for child in children[1:]:
            if child.type == "NAME":
                out["sample_per"] = str(child)
            else:
                out["sample_seed"] = self._whole(child)
        return ("sample", out, self._span(meta))

    def data_min_count(self, meta: Any, children: list[Token]) -> DataClause:
        count = (self._whole(children[0]), tuple(str(c) for c in children[1:]))
        return ("min_count", {"min_count": count}, self._span(meta))

    def data_map(self, meta: Any, children: list[tuple[str, str, Span]]) -> DataClause:
        report_repeats(((new, span) for new, _, span in children), "mapped column", self.errors)
        return ("map", {"mapping": {new: old for new, old, _ in reversed(children)}}, self._span(meta))

    def data_parse(self, meta: Any, children: list[tuple[str, str]]) -> DataClause:
        return ("parse", {"parse": dict(children)}, self._span(meta))

    def parsing(self, meta: Any, children: list[Token]) -> tuple[str, str]:
        return (str(children[0]), str(children[1]))

    def mapping(self, meta: Any, children: list[Token]) -> tuple[str, str, Span]:
        return (str(children[0]), str(children[1]), self._span(meta))

    def conversation_decl(self, meta: Any, children: list[Any]) -> tuple[str, Any]:
        node = n.Conversation(span=self._span(meta), name=str(children[0]), turns=tuple(children[1:]))
        return ("conversation", node)

    def turn(self, meta: Any, children: list[Any]) -> n.Turn:
        return n.Turn(span=self._span(meta), role=cast(n.Role, str(children[0])), **children[1])

    def turn_text(self, meta: Any, children: list[Any]) -> dict[str, Any]:
        push = scalar(children[1]) if len(children) > 1 else None
        return {"text": children[0], **({"push": push} if push is not None else {})}

    def turn_prompt(self, meta: Any, children: list[Any]) -> dict[str, Any]:
        return {"prompt": True}

    def turn_answer(self, meta: Any, children: list[Any]) -> dict[str, Any]:
        form = next((c for c in children[1:] if isinstance(c, n.AnswerSpec)), None)
        decode = tuple(c for c in children[1:] if isinstance(c, n.Option))
        return {"generate": True, "answer": self._ref(children[0]), "answer_form": form, "decode": decode}

    def turn_template(self, meta: Any, children: list[Any]) -> dict[str, Any]:
        return {"template": self._ref(children[0])}

    def turn_generate(self, meta: Any, children: list[Any]) -> dict[str, Any]:
        return {"generate": True, "decode": tuple(children)}

    def followup_decl(self, meta: Any, children: list[Any]) -> tuple[str, Any]:
        rest = children[2:]
        decode = next((c for c in rest if isinstance(c, tuple)), ())
        judge = next((c for c in rest if isinstance(c, n.JudgeDef)), None)
        node = n.FollowUpDef(span=self._span(meta), name=str(children[0]), text=children[1], decode=decode,
                             judge=judge)
        return ("followup", node)

    def followup_decode(self, meta: Any, children: list[n.Option]) -> tuple[n.Option, ...]:
        return tuple(children)

    def judge(self, meta: Any, children: list[Any]) -> n.JudgeDef:
        fields: dict[str, Any] = {}
        for option in children[1:]:
            fields.update(option)
        return n.JudgeDef(span=self._span(meta), labels=tuple(str(v) for v in children[0]), **fields)

    def judge_model(self, meta: Any, children: list[Any]) -> dict[str, Any]:
        return {"model": children[0].value}

    def judge_prompt(self, meta: Any, children: list[Any]) -> dict[str, Any]:
        return {"prompt": children[0]}

    def judge_reply(self, meta: Any, children: list[Any]) -> dict[str, Any]:
        return {"reply": self._ref(children[0])}

    # ---- building blocks of the puzzle and generator blocks' clauses -------------------
    def assignment(self, meta: Any, c: list[Any]) -> tuple[n.Scalar, ...]:
        return tuple(scalar(x) for x in c)

    def weight(self, meta: Any, c: list[Any]) -> tuple[n.Scalar, ...]:
        return (str(c[0]), parse_number(c[1]))

    def band(self, meta: Any, c: list[Any]) -> tuple[n.Scalar, ...]:
        return (str(c[0]), str(c[1]), parse_number(c[2]))

    # ---- expressions -------------------------------------------------------------------
    def or_expr(self, meta: Any, c: list[n.Expr]) -> n.BoolOp:
        return n.BoolOp(span=self._span(meta), op="or", operands=tuple(c))

    def and_expr(self, meta: Any, c: list[n.Expr]) -> n.BoolOp:
        return n.BoolOp(span=self._span(meta), op="and", operands=tuple(c))

    def negate(self, meta: Any, c: list[n.Expr]) -> n.Not:
        return n.Not(span=self._span(meta), operand=c[0])

    def comparison(self, meta: Any, c: list[Any]) -> n.Compare:
        return n.Compare(span=self._span(meta), left=c[0], op=str(c[1]), right=c[2])

    def dotted(self, meta: Any, c: list[Token]) -> n.Name:
        return n.Name(span=self._span(meta), parts=tuple(str(t) for t in c))

    def number(self, meta: Any, c: list[Token]) -> n.Literal_:
        return n.Literal_(span=self._span(meta), value=parse_number(c[0]))

    def string(self, meta: Any, c: list[n.Text]) -> n.Literal_:
        return n.Literal_(span=self._span(meta), value=c[0].value)


@cache
def _meta_methods(cls: type) -> dict[str, Callable[..., Any]]:
    """The methods of a v_args(meta=True) transformer class by rule name, as lark finds them on an instance."""
    found: dict[str, Callable[..., Any]] = {}
    for klass in reversed(cls.__mro__):
        for name, attr in vars(klass).items():
            if isinstance(attr, _VArgsWrapper) and attr.visit_wrapper is _vargs_meta:
                found[name] = attr.base_func
            else:
                found.pop(name, None)
    return found


def build_spec(tree: Tree[Token], file: str, errors: ErrorCollector, syntax: Syntax) -> n.Spec:
    """Assemble the statements of one file into a Spec, reporting repeated header statements."""
    statements = ToAst(file, errors, syntax).transform(tree)
    fields: dict[str, Any] = {"file": file}
    seen: dict[str, Span] = {}
    lists: dict[str, list[Any]] = {k: [] for k in _LIST_FIELDS.values()}
    for kind, value in statements:
        if isinstance(value, n.Block):
            kind, value = _owned(value)
        if kind in _LIST_FIELDS:
            lists[_LIST_FIELDS[kind]].append(value)
            continue
        span, payload = (value.span, value) if kind == "header" else value
        if kind in seen:
            errors.add(span, f"'{_KEYWORD[kind]}' is given twice (first at line {seen[kind].line})",
                       "keep one of them")
            continue
        seen[kind] = span
        fields[kind] = payload
    fields.update({k: tuple(v) for k, v in lists.items()})
    return n.Spec(span=Span(file, 1, 1), **fields)


def _owned(block: n.Block) -> tuple[str, n.Node]:
    """A declared block as the AST keeps it: the puzzle and generator blocks in their own nodes (which
    spec_audits/puzzles and the generator's family read), any other in Spec.blocks."""
    if block.keyword == "puzzle":
        clauses = tuple(n.PuzzleClause(span=c.span, keyword=c.keyword, args=cast(n.PuzzleArgs, c.value))
                        for c in block.clauses)
        return "puzzle", n.PuzzleDef(span=block.span, name=block.name, clauses=clauses)
    if block.keyword == "generator":
        return "generator", n.GeneratorDef(span=block.span, name=block.name, clauses=block.clauses)
    return "block", block


_LIST_FIELDS = {
    "block": "blocks", "import": "imports", "factor": "factors", "text": "texts", "influence": "influences",
    "data": "data", "conversation": "conversations", "followup": "followups",
    "puzzle": "puzzles", "generator": "generators", "design": "designs",
}
_KEYWORD = {"header": "suite", "version": "version", "seed": "seed",
            "description": "description", "citation": "citation"}

