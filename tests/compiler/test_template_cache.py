"""Compiled templates are kept in the user's own cache folder (compiler/template_cache.py): a warm check loads
them instead of lexing, parsing and compiling, renders and meters them exactly as a fresh compile does, and
never runs an entry that is not the one this process would have written."""

from __future__ import annotations

import contextlib
import marshal
import os
from collections.abc import Iterator
from itertools import islice
from pathlib import Path
from typing import Any

import pytest
from jinja2 import Environment, TemplateSyntaxError, nodes

from spec_audits.base.user_cache import CACHE_ENV
from spec_audits.compiler import nodes as n
from spec_audits.compiler import template_cache, templates
from spec_audits.compiler.dispatch.build import check_file
from spec_audits.compiler.errors import ErrorCollector, Span
from spec_audits.compiler.family import PlannedDesign
from spec_audits.compiler.sandbox import environment, rendered, tally_steps
from spec_audits.compiler.templates import check_attributes, compile_text
from tests.support import ROOT

SHIPPED = sorted((ROOT / "specs").glob("*.spec"))
SOURCE = "{% for x in xs %}{{ x.name | upper }}, {% endfor %}{{ first.n }} {{ first.noun }}"
CONTEXT = {"xs": [{"name": "ab"}, {"name": "c"}], "first": {"n": 2, "noun": "people"}}


def _fresh() -> None:
    """Forget what this process compiled: the next compile reads the cache folder, or compiles."""
    template_cache.load.cache_clear()
    templates.parsed.cache_clear()
    templates._compiled.cache_clear()


@pytest.fixture(autouse=True)
def cache_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "cache"))
    _fresh()
    yield tmp_path / "cache" / template_cache.FOLDER
    _fresh()


@contextlib.contextmanager
def _no_compiling(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Inside the block, jinja2 neither lexes, parses nor compiles a template."""
    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("a cached template was parsed or compiled again")

    with monkeypatch.context() as patch:
        for name in ("parse", "_parse", "compile", "lex", "_tokenize"):
            patch.setattr(Environment, name, refuse)
        yield


def _checked(path: Path) -> tuple[Any, list[tuple[list[dict[str, Any]], int]]]:
    """The spec's planned size, and per design some rows (its budget sample, else its first rows) with the
    template steps their renders took."""
    checked = check_file(path)
    rows = []
    for design in checked.designs:
        with tally_steps() as steps:
            some = design.sample(8) if isinstance(design, PlannedDesign) else design.rows()
            rows.append((list(islice(some, 400)), steps.steps))
    return checked.size, rows


def _shape(value: Any) -> Any:
    """A syntax tree as comparable values, line numbers and environment included."""
    if isinstance(value, nodes.Node):
        return (type(value).__name__, value.lineno, value.environment is not None,
                [_shape(getattr(value, name)) for name in value.fields])
    if isinstance(value, list | tuple):
        return [type(value).__name__, *map(_shape, value)]
    return value


@pytest.mark.parametrize("path", SHIPPED, ids=[path.stem for path in SHIPPED])
def test_a_cached_template_renders_and_meters_as_a_fresh_one(path: Path, cache_folder: Path,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    saved: dict[str, template_cache.Entry] = {}
    save = template_cache.save
    monkeypatch.setattr(template_cache, "save", lambda source, entry: (saved.setdefault(source, entry),
                                                                       save(source, entry)))
    with contextlib.chdir(ROOT):
        fresh = _checked(path.relative_to(ROOT))
        assert saved, "the spec compiles no template"
        assert len(list(cache_folder.iterdir())) >= len(saved)
        _fresh()
        with _no_compiling(monkeypatch):
            assert _checked(path.relative_to(ROOT)) == fresh  # the same sizes, steps and rendered rows
            for source, entry in saved.items():
                loaded = template_cache.load(source)
                assert loaded is not None
                assert loaded.code == entry.code
                assert (loaded.names, loaded.reads) == (entry.names, entry.reads)
                assert _shape(loaded.tree) == _shape(entry.tree)


def test_a_warm_template_reports_the_same_mistakes() -> None:
    """The checks of unknown filters and tests (in a branch, where jinja2 compiles them), reserved names and
    misspelt attributes read the loaded tree as they read a fresh parse."""
    text = n.Text(span=Span("t.spec", 3, 10), body_line=3,
                  value="{{ self }}{% if x %}{{ first.nuon | shout }}{{ 1 if x is oddish }}{% endif %}")
    found = []
    for _ in range(2):
        errors = ErrorCollector()
        assert compile_text(text, "template 'q'", {"first", "self", "x"}, errors) is not None
        check_attributes(text, "template 'q'", {"first": ["n", "noun"]}, errors)
        found.append([(d.span, d.message, d.hint) for d in errors.diagnostics])
        _fresh()
    assert template_cache.load(text.value) is not None
    assert found[0] == found[1]
    assert [message for _, message, _ in found[0]] == [
        "unknown template filter 'shout' in template 'q'", "unknown template test 'oddish' in template 'q'",
        "'self' is reserved in templates (template 'q')", "undefined template variable 'first.nuon' in template 'q'"]


def _entry_file(cache_folder: Path) -> Path:
    files = list(cache_folder.iterdir())
    assert len(files) == 1
    return files[0]


def _render(source: str) -> tuple[str, int]:
    template, _, _ = templates._compiled(source)
    return rendered(template, CONTEXT)


@pytest.mark.parametrize("damage", ["flipped", "truncated", "empty", "digest only"])
def test_a_damaged_entry_is_built_again_and_replaced(damage: str, cache_folder: Path) -> None:
    expected = _render(SOURCE)
    path = _entry_file(cache_folder)
    good = path.read_bytes()
    data = {"flipped": good[:-5] + bytes([good[-5] ^ 1]) + good[-4:], "truncated": good[:len(good) // 2],
            "empty": b"", "digest only": good[:32]}[damage]
    path.write_bytes(data)
    _fresh()
    assert template_cache.load(SOURCE) is None
    assert _render(SOURCE) == expected
    assert path.read_bytes() == good  # rebuilt and written again
    _fresh()
    assert template_cache.load(SOURCE) is not None


def test_another_templates_entry_is_never_used(cache_folder: Path) -> None:
    """An entry copied to the name of another template's is not that template's: its digest is keyed by it."""
    other = "{{ first.noun }} {{ first.n }}"
    expected = _render(other)
    other_path = _entry_file(cache_folder)
    _fresh()
    _render(SOURCE)
    (source_path,) = set(cache_folder.iterdir()) - {other_path}
    other_path.write_bytes(source_path.read_bytes())
    _fresh()
    assert template_cache.load(other) is None
    assert _render(other) == expected


def test_a_planted_entry_is_never_run(cache_folder: Path, tmp_path: Path) -> None:
    """Code in an entry runs only when its digest is the one this process computes for that template: a
    planted entry, even one written as this module writes them but for other bytes, is rebuilt unrun."""
    marker = tmp_path / "ran"
    expected = _render(SOURCE)
    path = _entry_file(cache_folder)
    good = path.read_bytes()
    payload = marshal.loads(good[32:])
    planted = (payload[0], compile(f"open({str(marker)!r}, 'w')", "<template>", "exec"), *payload[2:])
    path.write_bytes(good[:32] + marshal.dumps(planted))
    _fresh()
    assert _render(SOURCE) == expected
    assert not marker.exists()


def test_an_entry_others_could_write_is_never_loaded(cache_folder: Path) -> None:
    _render(SOURCE)
    path = _entry_file(cache_folder)
    path.chmod(0o644)
    _fresh()
    assert template_cache.load(SOURCE) is None
    path.chmod(0o600)
    _fresh()
    assert template_cache.load(SOURCE) is not None


def test_a_template_with_a_mistake_is_never_kept(cache_folder: Path) -> None:
    with pytest.raises(TemplateSyntaxError):
        templates._compiled("{{ first.n | nofilter }}")
    assert not cache_folder.exists() or not list(cache_folder.iterdir())


def test_a_cache_folder_that_cannot_be_written_costs_only_the_time(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    blocked = tmp_path / "a file"
    blocked.write_text("")
    monkeypatch.setenv(CACHE_ENV, str(blocked))  # no folder can be made under a file, whoever runs the test
    expected = rendered(environment().from_string(SOURCE), CONTEXT)  # jinja2's own compile
    assert expected == ("AB, C, 2 people", 21)
    assert _render(SOURCE) == expected
    _fresh()
    assert _render(SOURCE) == expected
    assert blocked.read_text() == ""


def test_the_folder_keeps_at_most_max_entries(cache_folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Past MAX_ENTRIES, writing an entry drops the least recently written quarter."""
    monkeypatch.setattr(template_cache, "MAX_ENTRIES", 4)
    sources = [f"{{{{ first.n }}}} {index}" for index in range(5)]
    for index, source in enumerate(sources[:4]):
        templates._compiled(source)
        os.utime(_file(source), ns=(10**18 + index, 10**18 + index))  # written in this order
    templates._compiled(sources[4])
    assert set(cache_folder.iterdir()) == {_file(source) for source in sources[2:]}


def _file(source: str) -> Path:
    return template_cache._path(template_cache._key(source))
