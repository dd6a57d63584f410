"""What each name of a template holds, followed through its syntax tree: loops, `set` and `with`.

A design describes the values it gives a template as shapes: `Fields` (a mapping whose keys are known,
each with the shape of its value, or None where that is not known) and `Items` (a list whose elements
share a shape). Walking the tree, a name bound by `for x in xs` holds the element shape of `xs`, `set`
and `with` bind the shape of their value, and `loop` is jinja2's loop object; `x.attr` on a `Fields`
value without that key is a misspelt attribute, in any branch. Anything of unknown shape (a name the
design does not describe, a filter's result, a name set differently in two branches) is accepted.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from jinja2 import nodes

from spec_audits.base.records import Record


class Fields(Record):
    """A mapping with known keys; each key's value has its shape, or None when not known."""

    names: Mapping[str, Shape | None]


class Items(Record):
    """A list whose elements all have one shape."""

    element: Shape | None


Shape = Fields | Items
Scope = dict[str, Shape | None]


def record(names: Iterable[str], **nested: Shape) -> Fields:
    """Keys of unknown shape (`names`), plus keys whose values have a shape of their own (`nested`)."""
    return Fields({**dict.fromkeys(names), **nested})


LOOP_FIELDS = ("index", "index0", "revindex", "revindex0", "first", "last", "length", "depth", "depth0",
               "cycle", "changed")
"""jinja2's `loop` inside a for loop (besides `previtem` and `nextitem`, which hold the element shape)."""
_SAME_LIST = frozenset({"list", "reverse", "sort", "unique", "select", "reject", "selectattr", "rejectattr"})
_ONE_ELEMENT = frozenset({"first", "last", "random"})
_OWN_SCOPE = (nodes.Block, nodes.Scope, nodes.ScopedEvalContextModifier, nodes.FilterBlock)


class Misspelt(Record):
    """`dotted` (e.g. `ex.item.contxt`) reads `attr` of a value whose keys are `known`."""

    dotted: str
    attr: str
    known: tuple[str, ...]
    lineno: int  # the template's line (1-based)


def misspelt_attributes(tree: nodes.Template, schema: Mapping[str, Shape]) -> list[Misspelt]:
    """Every `name.attr` chain that reads a key its value lacks, in template order, each dotted name once."""
    walker = _Walker()
    walker.statement(tree, dict(schema))
    first: dict[str, Misspelt] = {}
    for found in walker.found:
        first.setdefault(found.dotted, found)
    return list(first.values())


class _Walker:
    def __init__(self) -> None:
        self.found: list[Misspelt] = []

    def statements(self, body: Iterable[nodes.Node], scope: Scope) -> None:
        for node in body:
            self.statement(node, scope)

    def statement(self, node: nodes.Node, scope: Scope) -> None:
        if isinstance(node, nodes.For):
            self._for(node, scope)
        elif isinstance(node, nodes.If):
            self._if(node, scope)
        elif isinstance(node, nodes.Assign):
            _bind(node.target, self.expr(node.node, scope), scope)
        elif isinstance(node, nodes.AssignBlock):
            self.statements(node.body, dict(scope))
            _bind(node.target, None, scope)
        elif isinstance(node, nodes.With):
            inner = dict(scope)
            for target, value in zip(node.targets, node.values, strict=True):
                _bind(target, self.expr(value, scope), inner)
            self.statements(node.body, inner)
        elif isinstance(node, (nodes.Macro, nodes.CallBlock)):
            self._callable(node, scope)
        elif isinstance(node, (nodes.Import, nodes.FromImport)):
            names = [node.target] if isinstance(node, nodes.Import) else node.names
            scope.update({name if isinstance(name, str) else name[-1]: None for name in names})
        else:
            inner = dict(scope) if isinstance(node, _OWN_SCOPE) else scope
            for child in node.iter_child_nodes():
                if isinstance(child, nodes.Expr):
                    self.expr(child, inner)
                else:
                    self.statement(child, inner)

    def _for(self, node: nodes.For, scope: Scope) -> None:
        iterated = self.expr(node.iter, scope)
        element = iterated.element if isinstance(iterated, Items) else None
        inner = dict(scope)
        _bind(node.target, element, inner)
        if node.test is not None:
            self.expr(node.test, inner)
        inner["loop"] = Fields({**dict.fromkeys(LOOP_FIELDS), "previtem": element, "nextitem": element})
        self.statements(node.body, inner)
        self.statements(node.else_, dict(scope))

    def _if(self, node: nodes.If, scope: Scope) -> None:
        """Each branch in its own scope; a name any branch sets is of unknown shape after the `if`."""
        self.expr(node.test, scope)
        changed: set[str] = set()
        for body in (node.body, node.elif_, node.else_):
            branch = dict(scope)
            self.statements(body, branch)
            changed.update(name for name, shape in branch.items() if name not in scope or scope[name] is not shape)
        scope.update(dict.fromkeys(changed))

    def _callable(self, node: nodes.Macro | nodes.CallBlock, scope: Scope) -> None:
        for default in node.defaults:
            self.expr(default, scope)
        if isinstance(node, nodes.CallBlock):
            self.expr(node.call, scope)
        inner = dict(scope)
        inner.update(dict.fromkeys([arg.name for arg in node.args] + ["caller", "varargs", "kwargs"]))
        self.statements(node.body, inner)
        if isinstance(node, nodes.Macro):
            scope[node.name] = None

    def expr(self, node: nodes.Node, scope: Scope) -> Shape | None:
        """The shape of an expression's value (None: not known), reporting misspelt attributes on the way."""
        if isinstance(node, nodes.Name):
            return scope.get(node.name) if node.ctx == "load" else None
        if isinstance(node, nodes.Getattr):
            return self._attribute(node, self.expr(node.node, scope))
        if not isinstance(node, (nodes.Getitem, nodes.Filter, nodes.Call)):
            for child in node.iter_child_nodes():
                self.expr(child, scope)
            return None
        callee = _callee(node)
        owner = None if callee is None else self.expr(callee, scope)
        for child in node.iter_child_nodes(exclude=("node",)):
            self.expr(child, scope)
        if isinstance(node, nodes.Getitem):
            return _item(owner, node.arg)
        if isinstance(node, nodes.Filter) and isinstance(owner, Items):
            return owner if node.name in _SAME_LIST else owner.element if node.name in _ONE_ELEMENT else None
        return None

    def _attribute(self, node: nodes.Getattr, owner: Shape | None) -> Shape | None:
        if not isinstance(owner, Fields):
            return None
        if node.attr in owner.names:
            return owner.names[node.attr]
        self.found.append(Misspelt(dotted(node), node.attr, tuple(sorted(owner.names)), node.lineno))
        return None


def _bind(target: nodes.Node, shape: Shape | None, scope: Scope) -> None:
    """A plain name takes the shape; the names of an unpacking (`for k, v in ...`) are of unknown shape."""
    if isinstance(target, nodes.Name):
        scope[target.name] = shape
        return
    scope.update(dict.fromkeys(name.name for name in target.find_all(nodes.Name)))


def _callee(node: nodes.Getitem | nodes.Filter | nodes.Call) -> nodes.Node | None:
    """What the subscript, filter or call reads: of a method call (`row.get(...)`) only its object, since
    the sandbox judges the call itself. None for the filter of a filter block, which reads nothing."""
    if isinstance(node, nodes.Call) and isinstance(node.node, nodes.Getattr):
        return node.node.node
    return node.node


def _item(owner: Shape | None, key: nodes.Node) -> Shape | None:
    """`xs[0]` holds an element, `xs[1:]` is the list again, `row["key"]` the key's value."""
    if isinstance(owner, Items):
        if isinstance(key, nodes.Slice):
            return owner
        return owner.element if isinstance(key, nodes.Const) and isinstance(key.value, int) else None
    if isinstance(owner, Fields) and isinstance(key, nodes.Const) and isinstance(key.value, str):
        return owner.names.get(key.value)
    return None


def dotted(node: nodes.Node) -> str:
    """How the template spells an attribute chain: `ex.item.contxt`, `people[0].nmae`."""
    if isinstance(node, nodes.Name):
        return node.name
    if isinstance(node, nodes.Getattr):
        return f"{dotted(node.node)}.{node.attr}"
    if isinstance(node, nodes.Getitem) and isinstance(node.arg, nodes.Const):
        return f"{dotted(node.node)}[{node.arg.value!r}]"
    return "(...)"
