"""compiler/tree_to_ast.py calls each rule's method as lark's Transformer does (v_args(meta=True): the node's meta
and children; an error raised as lark's VisitError), without lark's wrapper per node: the same AST for every
shipped spec, and the same diagnostics for specs with mistakes the AST stage reports."""

from __future__ import annotations

from typing import Any

import pytest
from lark import Token, Transformer, Tree
from lark.exceptions import VisitError

from spec_audits.compiler.errors import ErrorCollector
from spec_audits.compiler.recover import parse_spec_text
from spec_audits.compiler.tree_to_ast import ToAst, build_spec
from spec_audits.dispatch import registry
from tests.support import ROOT

SPECS = sorted((ROOT / "specs").glob("*.spec"))
REPEATED = 'suite a\nseed 1\nseed 2\nfactor f:\n  x: "x"\n  x: "y"\n'  # two mistakes the AST stage reports


def _built(text: str) -> tuple[Any, list[Any]]:
    parsed = parse_spec_text(text, "t.spec", registry.syntax())
    errors = ErrorCollector()
    return build_spec(parsed.tree, "t.spec", errors, parsed.syntax), list(errors.diagnostics)


@pytest.mark.parametrize("text", [*(path.read_text(encoding="utf-8") for path in SPECS), REPEATED],
                         ids=[*(path.name for path in SPECS), "repeated"])
def test_the_ast_is_the_one_larks_own_calls_build(text: str, monkeypatch: pytest.MonkeyPatch) -> None:
    ours = _built(text)
    monkeypatch.setattr(ToAst, "_call_userfunc", Transformer._call_userfunc)
    assert ours == _built(text)


def _raised(tree: Tree[Token]) -> tuple[object, ...]:
    with pytest.raises(VisitError) as raised:
        ToAst("t.spec", ErrorCollector(), registry.syntax()).transform(tree)
    return raised.value.rule, type(raised.value.orig_exc), str(raised.value.orig_exc), raised.value.obj is tree


def test_a_methods_error_is_raised_as_larks_visit_error(monkeypatch: pytest.MonkeyPatch) -> None:
    tree = Tree("seed_decl", [])  # a seed without its number: the method's children[0] fails
    ours = _raised(tree)
    monkeypatch.setattr(ToAst, "_call_userfunc", Transformer._call_userfunc)
    assert ours == _raised(tree) == ("seed_decl", IndexError, "list index out of range", True)
