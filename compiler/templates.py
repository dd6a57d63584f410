"""jinja2 templates, always sandboxed with strict undefined, checked against the names a design provides."""

from __future__ import annotations

import itertools
import re
from collections import OrderedDict
from collections.abc import Collection, Mapping
from functools import lru_cache
from operator import itemgetter
from typing import Any

from jinja2 import Template, TemplateSyntaxError, UndefinedError, meta, nodes
from jinja2.exceptions import SecurityError

from spec_audits.compiler import nodes as n
from spec_audits.compiler import template_cache
from spec_audits.compiler.errors import Diagnostic, ErrorCollector, Span, SpecError, did_you_mean
from spec_audits.compiler.sandbox import add_steps, environment, rendered
from spec_audits.compiler.template_shapes import Fields, Items, Misspelt, Shape, misspelt_attributes, record

_MISSING_ATTR = re.compile(r"has no attribute '([^']+)'")
_SANDBOX_HINT = "spec templates read their values, never change them, and build no huge ranges, powers or texts"
RESERVED = ("self",)  # jinja2's own names, which would print its internals into a prompt

_ABSENT = object()
_DICT_ATTRIBUTES = frozenset(dir(dict))  # jinja2 looks these up on the dict before its items


class RenderMemo:
    """Renders kept for reuse by every template of the process, least recently used dropped first, so
    memory stays bounded (in entries and in characters) however large the design. Each keeps the steps its
    render took (spec_audits.compiler.sandbox), which a reuse counts again: the compile budget's count of template
    work is the same whatever the memo held before."""

    def __init__(self, entries: int, chars: int) -> None:
        self.entries, self.chars = entries, chars
        self._kept: OrderedDict[tuple[Any, ...], tuple[str, int]] = OrderedDict()
        self._held = 0

    def get(self, key: tuple[Any, ...]) -> tuple[str, int] | None:
        found = self._kept.get(key)
        if found is not None:
            self._kept.move_to_end(key)
        return found

    def put(self, key: tuple[Any, ...], text: str, steps: int) -> None:
        self._kept[key] = (text, steps)
        self._held += len(text)
        while len(self._kept) > self.entries or self._held > self.chars:
            self._held -= len(self._kept.popitem(last=False)[1][0])


# Sized so that the 1M-stimulus design of benchmarks/compile_bench.py renders each text once: its prompt
# has about 67,000 distinct (sizes, groups) keys, which its few-shot demonstrations revisit.
MEMO = RenderMemo(entries=1 << 17, chars=16_000_000)
_tokens = itertools.count()  # one per template, for its renders' keys in MEMO


@lru_cache(maxsize=1024)
def parsed(source: str) -> nodes.Template:
    """A template text's syntax tree, parsed once per process for every check that reads it (each reads it,
    none changes it; compiling parses a tree of its own, which the sandbox's metering rewrites), or read
    back from the user's cache folder (spec_audits.compiler.template_cache)."""
    saved = template_cache.load(source)
    return environment().parse(source) if saved is None else saved.tree


@lru_cache(maxsize=1024)
def _compiled(source: str) -> tuple[Template, frozenset[str], template_cache.Reads]:
    """A template text compiled once per process (the shared checks and the design's family both compile it),
    with the names of the design it reads and, when it reads nothing less simple, the attributes (`_reads`);
    loaded from the user's cache folder when an earlier command compiled it, else compiled and kept there."""
    env = environment()
    entry = template_cache.load(source)
    if entry is None:
        tree = parsed(source)
        entry = template_cache.Entry(env.compile(source), frozenset(meta.find_undeclared_variables(tree)),
                                     _reads(tree), tree)
        template_cache.save(source, entry)
    # The environment's globals as a plain dict, where jinja2 gives a ChainMap over them: each render copies
    # them into its context, which through ChainMap's Python methods was most of a short template's render.
    # The sandbox never changes them, so the copy is theirs at every render.
    template = env.template_class.from_code(env, entry.code, dict(env.globals), None)
    return template, entry.names, entry.reads


class CompiledText:
    """A spec text compiled once and rendered per stimulus.

    Most texts read a few attributes (`{{ target.plural }}`) that repeat across many stimuli, so a render
    is memoised on exactly the values the template reads; a template that reads whole objects (loops,
    item access, filters over a group) has no such key and is always rendered.
    """

    def __init__(self, text: n.Text, label: str) -> None:
        self.text = text
        self.label = label
        self.template, self.names, reads = _compiled(text.value)  # names: those of the design it reads
        self._key = None if reads is None else _KeyReader(reads, next(_tokens))

    @property
    def tree(self) -> nodes.Template:
        """The text's syntax tree, which every check of the process shares: read it, never change it."""
        return parsed(self.text.value)

    def render(self, context: Mapping[str, Any]) -> str:
        if self._key is None:
            return self._render(context)[0]
        try:
            key = self._key(context)
            found = MEMO.get(key)
        except (KeyError, TypeError):
            return self._render(context)[0]  # let jinja2 report the missing name as usual
        if found is None:
            found = self._render(context)
            MEMO.put(key, *found)
        else:
            add_steps(found[1])
        return found[0]

    def _render(self, context: Mapping[str, Any]) -> tuple[str, int]:
        """A render and its steps; a template over its limits is the spec's mistake, located at the text."""
        try:
            return rendered(self.template, context)
        except SecurityError as err:
            raise SpecError([Diagnostic(self.text.span, f"{self.label} is refused: {err}", _SANDBOX_HINT)]) from None


class _KeyReader:
    """The values a template reads, as its memo key: its token (unique per template, unlike id()), then
    per name the whole value or the attributes read. A dict without an attribute reads as _ABSENT: the
    render sees an undefined value there (`| default(...)` decides), the same for every such dict."""

    def __init__(self, reads: tuple[tuple[str, str | None], ...], token: int) -> None:
        attrs: dict[str, list[str]] = {}
        for name, attr in reads:
            attrs.setdefault(name, [])
            if attr is not None:
                attrs[name].append(attr)
        self._token = token
        self._names = tuple((name, tuple(read), itemgetter(*read) if read else None)
                            for name, read in sorted(attrs.items()))

    def __call__(self, context: Mapping[str, Any]) -> tuple[Any, ...]:
        key: list[Any] = [self._token]
        for name, attrs, getter in self._names:
            value = context[name]
            if getter is None:
                key.append(value)
            elif type(value) is not dict:
                raise TypeError(name)  # jinja2 may find an attribute of any other object: no key
            else:
                try:
                    key.append(getter(value))
                except KeyError:
                    key.append(tuple(value.get(attr, _ABSENT) for attr in attrs))
        return tuple(key)


def _reads(tree: nodes.Template) -> tuple[tuple[str, str | None], ...] | None:
    """The (name, attribute) pairs a template reads, or None if it reads anything less simple."""
    reads: set[tuple[str, str | None]] = set()
    attributed: set[int] = set()
    for getattr_node in tree.find_all(nodes.Getattr):
        if isinstance(getattr_node.node, nodes.Name):
            reads.add((getattr_node.node.name, getattr_node.attr))
            attributed.add(id(getattr_node.node))
    for name in tree.find_all(nodes.Name):
        if id(name) in attributed:
            continue
        if name.ctx != "load" or any(True for _ in tree.find_all((nodes.For, nodes.Macro, nodes.Assign))):
            return None
        reads.add((name.name, None))
    whole = {name for name, attr in reads if attr is None}
    if any(name in whole or attr in _DICT_ATTRIBUTES for name, attr in reads if attr is not None):
        return None  # an object used whole, or a dict's method (`.values`): the render may read anything
    return tuple(sorted(reads, key=lambda r: (r[0], r[1] or "")))


def check_syntax(text: n.Text, label: str, errors: ErrorCollector) -> tuple[nodes.Template, CompiledText] | None:
    """A template parsed and compiled, with its filters, tests and reserved names checked in every branch;
    None after a syntax error. Needs no design: the shared checks run it on every declared text."""
    try:
        tree = parsed(text.value)
        compiled = CompiledText(text, label)  # compiling finds unknown filters and tests
    except TemplateSyntaxError as err:
        errors.add(_line_span(text, err.lineno or 1), f"template syntax error in {label}: {err.message}",
                   "jinja2 syntax: {{ name }} for values, {% if ... %} ... {% endif %} for logic")
        return None
    except RecursionError:
        errors.add(text.span, f"{label} is nested too deeply to compile", "write the template with less nesting")
        return None
    used: dict[type[nodes.Node], set[str]] = {nodes.Filter: set(), nodes.Test: set(), nodes.Name: set()}
    for node in tree.find_all((nodes.Filter, nodes.Test, nodes.Name)):  # one walk for the three checks
        if isinstance(node, nodes.Filter | nodes.Test | nodes.Name):  # (what find_all yields, for the types)
            used[type(node)].add(node.name)
    _check_filters_and_tests(text, label, used, errors)
    for name in sorted(used[nodes.Name] & set(RESERVED)):
        errors.add(_name_span(text, name), f"'{name}' is reserved in templates ({label})",
                   "jinja2 means the template object itself by it; use the names the design provides")
    return tree, compiled


def compile_text(text: n.Text, label: str, provided: set[str], errors: ErrorCollector) -> CompiledText | None:
    """Compile a template and check that it uses only the names the design provides."""
    checked = check_syntax(text, label, errors)
    if checked is None:
        return None
    compiled = checked[1]
    for name in sorted(compiled.names - provided):  # the names it reads, found once (a code generation each)
        errors.add(_name_span(text, name), f"undefined template variable '{name}' in {label}",
                   did_you_mean(name, provided))
    return compiled


def slot(name: str) -> str:
    """How a name filled in at run time stands in a compiled text, for the runner to replace."""
    return "{{ " + name + " }}"


def check_slots(text: n.Text, label: str, slots: Collection[str], errors: ErrorCollector) -> None:
    """Names the runner fills in when it sends the text (`answer`, `reply`, `conversation`) are replaced as
    plain text, so each must be written alone, `{{ name }}`: not in a condition, a filter or a loop."""
    try:
        tree = parsed(text.value)
    except (TemplateSyntaxError, RecursionError):
        return  # reported by check_syntax
    bare = {id(node) for output in tree.find_all(nodes.Output) for node in output.nodes
            if isinstance(node, nodes.Name)}
    for node in tree.find_all(nodes.Name):
        if node.name in slots and id(node) not in bare:
            errors.add(_slot_span(text, node), f"'{node.name}' in {label} is filled in when the text is sent, so "
                       "it can only be shown as it is", f"write it alone: {slot(node.name)}")


def _slot_span(text: n.Text, node: nodes.Name) -> Span:
    """The first use of the name on its template line that is not a bare `{{ name }}`."""
    lines = text.value.split("\n")
    line = lines[node.lineno - 1] if 0 < node.lineno <= len(lines) else ""
    bare = [m.span() for m in re.finditer(r"\{\{-?\s*" + re.escape(node.name) + r"\s*-?\}\}", line)]
    for found in re.finditer(r"(?<![\w.])" + re.escape(node.name) + r"(?!\w)", line):
        if not any(start <= found.start() < end for start, end in bare):
            return _span_at(text, node.lineno - 1, found.start(), len(node.name))
    return _name_span(text, node.name)


def render_with_slots(compiled: CompiledText, context: Mapping[str, Any], slots: Collection[str]) -> str:
    """The text rendered now, its run-time names kept as `{{ name }}` for the runner (check_slots made sure
    they stand alone). Unlike a prompt, the text keeps its trailing newline: it reaches the model as written."""
    rendered = compiled.render({**context, **{name: slot(name) for name in slots}})
    return rendered + "\n" if compiled.text.value.endswith("\n") else rendered


def _check_filters_and_tests(text: n.Text, label: str, used: Mapping[type[nodes.Node], set[str]],
                             errors: ErrorCollector) -> None:
    """Every filter and test the template uses (`used`: their names by node type), in every branch (jinja2
    looks up those inside an `if` only when the branch renders)."""
    env = environment()
    for kind, node_type, known in (("filter", nodes.Filter, env.filters), ("test", nodes.Test, env.tests)):
        for name in sorted(used[node_type] - set(known)):
            errors.add(_name_span(text, name), f"unknown template {kind} '{name}' in {label}",
                       did_you_mean(name, known))


def check_attributes(text: n.Text, label: str, schema: Mapping[str, Shape | Collection[str]],
                     errors: ErrorCollector) -> None:
    """Every `name.attribute` chain the template reads, in every branch, against what the design gives each
    name (`schema`: a shape, or just the attribute names), followed into loops, `set` and `with`
    (spec_audits.compiler.template_shapes); names outside the schema, and values of unknown shape, are left alone.
    A template that does not parse is skipped: its syntax error is reported elsewhere."""
    try:
        tree = parsed(text.value)
    except (TemplateSyntaxError, RecursionError):
        return
    shapes = {name: value if isinstance(value, (Fields, Items)) else record(value) for name, value in schema.items()}
    for found in misspelt_attributes(tree, shapes):
        errors.add(_attribute_span(text, found), f"undefined template variable '{found.dotted}' in {label}",
                   did_you_mean(found.attr, found.known))


def _attribute_span(text: n.Text, found: Misspelt) -> Span:
    """The misspelt attribute on the template line that reads it (where jinja2 put the chain)."""
    lines = text.value.split("\n")
    body_line = lines[found.lineno - 1] if 0 < found.lineno <= len(lines) else ""
    parts = found.dotted.split(".")
    if all(part.isidentifier() for part in parts):
        chain = re.search(r"(?<![\w.])" + r"\s*\.\s*".join(map(re.escape, parts)) + r"(?!\w)", body_line)
        if chain is not None:
            return _span_at(text, found.lineno - 1, chain.end() - len(found.attr), len(found.attr))
    return _name_span(text, "." + found.attr)


def check_render(compiled: CompiledText, context: Mapping[str, Any], errors: ErrorCollector) -> str | None:
    """Render once with a representative context so misspelt attributes fail at compile time."""
    try:
        return compiled.render(context)
    except SpecError as err:
        errors.extend(err.diagnostics)
    except UndefinedError as err:
        _undefined_attribute(compiled, context, str(err.message), errors)
    except Exception as err:  # noqa: BLE001 - any template runtime error is the spec's, not ours
        errors.add(compiled.text.span, f"template error in {compiled.label}: {err}")
    return None


def _undefined_attribute(compiled: CompiledText, context: Mapping[str, Any], message: str,
                         errors: ErrorCollector) -> None:
    """Report `target.plurall` by its dotted name, at its place in the spec, with the valid attributes."""
    match = _MISSING_ATTR.search(message)
    if match is None:
        errors.add(compiled.text.span, f"undefined template variable in {compiled.label}: {message}")
        return
    attr = match.group(1)
    owner = re.search(r"([A-Za-z_][A-Za-z0-9_]*)\s*\.\s*" + re.escape(attr) + r"\b", compiled.text.value)
    scope = context.get(owner.group(1)) if owner else None
    dotted = f"{owner.group(1)}.{attr}" if owner else attr
    hint = did_you_mean(attr, scope if isinstance(scope, Mapping) else _attributes(context))
    errors.add(_name_span(compiled.text, "." + attr), f"undefined template variable '{dotted}' in {compiled.label}",
               hint)


def _attributes(context: Mapping[str, Any]) -> set[str]:
    names: set[str] = set()
    for value in context.values():
        if isinstance(value, Mapping):
            names.update(value)
    return names


def _line_span(text: n.Text, template_line: int) -> Span:
    line = text.body_line + template_line - 1
    column = text.span.column if line == text.span.line else 1
    return Span(text.span.file, line, column)


def _name_span(text: n.Text, needle: str) -> Span:
    """Point at the first occurrence of `needle` inside the text, in spec coordinates."""
    for offset, body_line in enumerate(text.value.split("\n")):
        col = body_line.find(needle)
        if col < 0:
            continue
        start = needle.lstrip(".")
        return _span_at(text, offset, col + len(needle) - len(start), len(start))
    return text.span


def _span_at(text: n.Text, offset: int, column: int, width: int) -> Span:
    """Line `offset` and 0-based `column` of the template text, in spec coordinates."""
    if offset and text.span.end_line == text.span.line:  # a one-line text: its line breaks are `\n` escapes
        column += sum(len(before) + len("\\n") for before in text.value.split("\n")[:offset])
        offset = 0
    line = text.body_line + offset
    if offset == 0 and line == text.span.line:
        column += text.span.column + 1  # past the opening quote
    else:
        column += text.indent + 1
    return Span(text.span.file, line, column, line, column + width)
