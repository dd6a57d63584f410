"""Stage 2, continued: the generator and design statements of the parse tree -> typed AST.

The base of compiler/tree_to_ast.py:ToAst; it relies on ToAst's _span, _whole and _ref.
"""

from __future__ import annotations

from typing import Any

from lark import Token, Transformer, v_args

from spec_audits.compiler import nodes as n
from spec_audits.compiler.ast_values import number, scalar


@v_args(meta=True)
class GeneratorsAndDesigns(Transformer):
    """Transformer methods of the `generator` and `design` rules."""

    # ---- generators ----------------------------------------------------------------
    def generator_decl(self, meta: Any, children: list[Any]) -> tuple[str, Any]:
        node = n.GeneratorDef(span=self._span(meta), name=str(children[0]), clauses=tuple(children[1:]))
        return ("generator", node)

    def _generator_clause(self, meta: Any, keyword: str, value: object) -> n.Clause:
        return n.Clause(span=self._span(meta), keyword=keyword, value=value)

    def g_from(self, meta: Any, c: list[Token]) -> n.Clause:
        return self._generator_clause(meta, "from", self._ref(c[0]))

    def g_analysis(self, meta: Any, c: list[Token]) -> n.Clause:
        return self._generator_clause(meta, "analysis", self._ref(c[0]))

    def g_humans(self, meta: Any, c: list[n.Text]) -> n.Clause:
        return self._generator_clause(meta, "humans", c[0])

    def g_model(self, meta: Any, c: list[n.Text]) -> n.Clause:
        return self._generator_clause(meta, "model", c[0])

    def g_prompt(self, meta: Any, c: list[Token]) -> n.Clause:
        return self._generator_clause(meta, "prompt", self._ref(c[0]))

    def g_neutral(self, meta: Any, c: list[Token]) -> n.Clause:
        return self._generator_clause(meta, "neutral", self._ref(c[0]))

    def g_persona(self, meta: Any, c: list[n.Option]) -> n.Clause:
        return self._generator_clause(meta, "persona", tuple(c))

    def g_decode(self, meta: Any, c: list[n.Option]) -> n.Clause:
        return self._generator_clause(meta, "decode", tuple(c))

    def g_jury(self, meta: Any, c: list[n.Text]) -> n.Clause:
        return self._generator_clause(meta, "jury", tuple(c))

    def g_accept(self, meta: Any, c: list[tuple[n.Scalar, ...]]) -> n.Clause:
        return self._generator_clause(meta, "accept", tuple(c))

    def g_retries(self, meta: Any, c: list[Token]) -> n.Clause:
        feedback = self._ref(c[1]) if len(c) > 1 else None
        return self._generator_clause(meta, "retries", (self._whole(c[0]), feedback))

    def g_write(self, meta: Any, c: list[n.Text]) -> n.Clause:
        return self._generator_clause(meta, "write", c[0])

    # ---- designs -----------------------------------------------------------------
    def design_decl(self, meta: Any, children: list[Any]) -> tuple[str, Any]:
        return ("design", n.Design(span=self._span(meta), name=str(children[0]), clauses=tuple(children[1:])))

    def _design_clause(self, meta: Any, keyword: str, value: object) -> n.Clause:
        return n.Clause(span=self._span(meta), keyword=keyword, value=value)

    def d_factors(self, meta: Any, c: list[Any]) -> n.Clause:
        return self._design_clause(meta, "factors", c[0])

    def d_influences(self, meta: Any, c: list[Any]) -> n.Clause:
        return self._design_clause(meta, "influences", c[0])

    def d_conditions(self, meta: Any, c: list[Any]) -> n.Clause:
        return self._design_clause(meta, "conditions", tuple(c))

    def d_sizes(self, meta: Any, c: list[Any]) -> n.Clause:
        return self._design_clause(meta, "sizes", tuple(c))

    def d_order(self, meta: Any, c: list[Any]) -> n.Clause:
        return self._design_clause(meta, "order", self._ref(c[0]))

    def d_samples(self, meta: Any, c: list[Any]) -> n.Clause:
        split = self._ref(c[1]) if len(c) > 1 else None
        samples = n.Samples(span=self._span(meta), count=self._whole(c[0]), split_by=split.name if split else None)
        return self._design_clause(meta, "samples", samples)

    def d_where(self, meta: Any, c: list[Any]) -> n.Clause:
        return self._design_clause(meta, "where", c[0])

    def d_cross(self, meta: Any, c: list[Any]) -> n.Clause:
        return self._design_clause(meta, "cross", self._ref(c[0]))

    def d_sample(self, meta: Any, c: list[Any]) -> n.Clause:
        seed = self._whole(c[1]) if len(c) > 1 else None
        return self._design_clause(meta, "sample", (self._whole(c[0]), seed))

    def d_examples(self, meta: Any, c: list[Any]) -> n.Clause:
        seed = self._whole(c[2]) if len(c) > 2 else None
        return self._design_clause(meta, "examples", (self._whole(c[0]), self._ref(c[1]), seed))

    def d_items(self, meta: Any, c: list[Any]) -> n.Clause:
        return self._design_clause(meta, "items", self._ref(c[0]))

    def d_trials(self, meta: Any, c: list[Any]) -> n.Clause:
        seed = self._whole(c[1]) if len(c) > 1 else None
        return self._design_clause(meta, "trials", (self._whole(c[0]), seed))

    def d_answer(self, meta: Any, c: list[Any]) -> n.Clause:
        return self._design_clause(meta, "answer", c[0])

    def d_decode(self, meta: Any, c: list[Any]) -> n.Clause:
        return self._design_clause(meta, "decode", tuple(c))

    def d_mode(self, meta: Any, c: list[Any]) -> n.Clause:
        return self._design_clause(meta, "mode", self._ref(c[0]))

    def d_analysis(self, meta: Any, c: list[Any]) -> n.Clause:
        return self._design_clause(meta, "analysis", (self._ref(c[0]), tuple(c[1:])))

    def d_system(self, meta: Any, c: list[Any]) -> n.Clause:
        return self._design_clause(meta, "system", self._ref(c[0]))

    def d_prompt(self, meta: Any, c: list[Any]) -> n.Clause:
        return self._design_clause(meta, "prompt", self._ref(c[0]))

    def d_followups(self, meta: Any, c: list[Any]) -> n.Clause:
        return self._design_clause(meta, "followups", tuple(self._ref(t) for t in c))

    def d_conversation(self, meta: Any, c: list[Any]) -> n.Clause:
        return self._design_clause(meta, "conversation", self._ref(c[0]))

    def d_over(self, meta: Any, c: list[Any]) -> n.Clause:
        return self._design_clause(meta, "over", tuple(c))

    def d_probes(self, meta: Any, c: list[Any]) -> n.Clause:
        return self._design_clause(meta, "probes", tuple(c))

    def d_unit(self, meta: Any, c: list[Token]) -> n.Clause:
        return self._design_clause(meta, "unit", tuple(self._ref(t) for t in c))

    def d_arms(self, meta: Any, c: list[Token]) -> n.Clause:
        return self._design_clause(meta, "arms", tuple(self._ref(t) for t in c))

    def d_reverse(self, meta: Any, c: list[Token]) -> n.Clause:
        """`reverse P by KEYS`: (probability, the keys one draw is made per)."""
        return self._design_clause(meta, "reverse", (number(c[0]), tuple(self._ref(t) for t in c[1:])))

    def d_protocol(self, meta: Any, c: list[Token]) -> n.Clause:
        """`protocol NAME [extract TEMPLATE]`: (the protocol, the extraction template or None)."""
        return self._design_clause(meta, "protocol", (self._ref(c[0]), self._ref(c[1]) if len(c) > 1 else None))

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
