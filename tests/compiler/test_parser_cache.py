"""The built parser is kept between commands in the user's own cache folder (compiler/parser_cache.py): a
pickle of lark's own objects, so it is loaded only when this user wrote it there and its unpickler makes only
lark's parser classes; a damaged or foreign file is built again; and a loaded parser parses every shipped spec
as one built afresh."""

from __future__ import annotations

import gc
import io
import os
import pickle
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from lark import Lark, Token, Tree
from lark.parsers.lalr_analysis import Reduce, Shift

from spec_audits.base.user_cache import CACHE_ENV
from spec_audits.compiler import parser_cache
from spec_audits.compiler.clauses import clause_rules
from spec_audits.compiler.parse import GRAMMAR_PATH
from spec_audits.compiler.parser_cache import OPTIONS, cache_file, cached_parser, saved_form
from spec_audits.dispatch import registry
from tests.support import ROOT

GRAMMAR = 'start: "a" NAME\n%import common.CNAME -> NAME\n%ignore " "\n'
OTHER = 'start: "b"\n'
SPECS = sorted((ROOT / "specs").glob("*.spec"))


@pytest.fixture(autouse=True)
def cache_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "cache"))
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    return tmp_path / "cache"


def _file(path: Path, grammar: str) -> bytes:
    """A saved parser of `grammar` as it would be kept at `path`."""
    return bytes.fromhex(path.stem) + saved_form(Lark(grammar, **OPTIONS))


def _plant(path: Path, data: bytes, mode: int) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    path.chmod(mode)


def _loaded(grammar: str, monkeypatch: pytest.MonkeyPatch) -> Lark:
    """The parser of `grammar` as the next command gets it; an AssertionError when it has to be built again."""

    def refused(*_args: object, **_kwargs: object) -> None:
        raise AssertionError("built again")

    with monkeypatch.context() as patch:
        patch.setattr(Lark, "__init__", refused)
        return cached_parser(grammar)


class _Runs:
    """A pickle that, when loaded, creates the file it names: what a planted cache file could do."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self) -> tuple[object, tuple[str, str]]:
        return open, (str(self.marker), "w")


def test_the_parser_is_saved_for_this_user_alone_and_loaded_by_the_next_command(
        cache_folder: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    built = cached_parser(GRAMMAR)
    path = cache_file(GRAMMAR)
    assert path.parent == cache_folder / "parsers"
    assert (path.stat().st_mode & 0o777, path.parent.stat().st_mode & 0o777) == (0o600, 0o700)
    assert not list((tmp_path / "tmp").iterdir())  # nothing in the shared temporary folder, as lark's cache=True
    loaded = _loaded(GRAMMAR, monkeypatch)
    assert loaded is not built
    assert loaded.parse("a x") == built.parse("a x") == Tree("start", [Token("NAME", "x")])
    assert cache_file(OTHER) != path  # keyed by the grammar: a family's clauses make another file


def _damaged() -> Iterator[tuple[str, bytes]]:
    """What a parser file could hold that does not load, after this key's digest or without it."""
    whole = saved_form(Lark(GRAMMAR, **OPTIONS))
    buffer = io.BytesIO()
    Lark(GRAMMAR, **OPTIONS).save(buffer)
    yield from {"empty": b"", "text": b"not a pickle", "pdf": b"%PDF"}.items()
    for name, data in {"int": b"\x80\x04K\x01.", "larks own save": buffer.getvalue(), "cut": whole[:len(whole) // 2],
                       "tuple": pickle.dumps((1,) * 9)}.items():
        yield f"keyed {name}", data  # after the key's digest, by the test
    yield "another key's", _file(cache_file(OTHER), OTHER)  # another grammar's file, renamed: never unpickled


@pytest.mark.parametrize(("name", "damage"), list(_damaged()), ids=[name for name, _ in _damaged()])
def test_a_damaged_or_foreign_file_is_built_again_and_replaced(name: str, damage: bytes,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    path = cache_file(GRAMMAR)
    _plant(path, bytes.fromhex(path.stem) + damage if name.startswith("keyed") else damage, 0o600)
    assert cached_parser(GRAMMAR).parse("a x").children[0] == "x"
    assert _loaded(GRAMMAR, monkeypatch).parse("a x").children[0] == "x"  # replaced by one that loads


def test_a_planted_pickle_is_never_run_even_from_the_users_own_file(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    path = cache_file(GRAMMAR)
    _plant(path, bytes.fromhex(path.stem) + pickle.dumps((_Runs(marker),) * 9), 0o600)
    assert cached_parser(GRAMMAR).parse("a x").children[0] == "x"
    assert not marker.exists()  # the unpickler makes lark's parser classes alone, never `open`
    assert path.read_bytes().startswith(bytes.fromhex(path.stem) + b"\x80\x05")  # replaced by a saved parser


@pytest.mark.parametrize("mode", [0o644, 0o620, 0o604])
def test_a_file_others_could_write_or_read_is_never_loaded(mode: int) -> None:
    path = cache_file(GRAMMAR)
    _plant(path, _file(path, OTHER), mode)  # would load: another grammar's parser under this one's key
    assert cached_parser(GRAMMAR).parse("a x").children[0] == "x"
    assert path.stat().st_mode & 0o777 == 0o600  # replaced by this user's own


def test_a_link_to_a_parser_file_is_never_followed(tmp_path: Path) -> None:
    path = cache_file(GRAMMAR)
    foreign = tmp_path / "elsewhere.parser"
    planted = _file(path, OTHER)  # loadable, but another grammar's
    _plant(foreign, planted, 0o600)
    path.parent.mkdir(parents=True)
    path.symlink_to(foreign)
    assert cached_parser(GRAMMAR).parse("a x").children[0] == "x"
    assert not path.is_symlink()
    assert foreign.read_bytes() == planted  # the link's target untouched


@pytest.mark.skipif(os.getuid() != 0, reason="giving a file to another user needs root")
def test_another_users_file_is_never_loaded() -> None:
    path = cache_file(GRAMMAR)
    _plant(path, _file(path, OTHER), 0o600)
    os.chown(path, 65534, 65534)
    assert cached_parser(GRAMMAR).parse("a x").children[0] == "x"


def test_a_cache_folder_that_cannot_be_written_costs_only_the_time(cache_folder: Path) -> None:
    cache_folder.write_text("a file where the folder should be")
    assert cached_parser(GRAMMAR).parse("a x").children[0] == "x"


def _tokens(tree: Tree[Token]) -> list[tuple[object, ...]]:
    return [(t.type, t.value, t.start_pos, t.line, t.column, t.end_line, t.end_column, t.end_pos)
            for t in tree.scan_values(lambda v: isinstance(v, Token))]


def test_a_loaded_parser_parses_every_shipped_spec_as_one_built_afresh(monkeypatch: pytest.MonkeyPatch) -> None:
    grammar = GRAMMAR_PATH.read_text(encoding="utf-8") + "\n" + clause_rules(registry.syntax())
    fresh = cached_parser(grammar)  # built, and saved
    loaded = _loaded(grammar, monkeypatch)
    for path in SPECS:
        text = path.read_text(encoding="utf-8")
        tree = loaded.parse(text)
        assert (tree, _tokens(tree)) == (fresh.parse(text), _tokens(fresh.parse(text))), path.name
    ours, theirs = loaded.parser.parser._parse_table, fresh.parser.parser._parse_table
    assert (ours.states, ours.start_states, ours.end_states) == (theirs.states, theirs.start_states, theirs.end_states)
    assert {action for row in ours.states.values() for action, _ in row.values()} == {Shift, Reduce}  # lark's own
    assert [str(rule) for rule in loaded.rules] == [str(rule) for rule in fresh.rules]
    assert [repr(t) for t in loaded.terminals] == [repr(t) for t in fresh.terminals]
    assert len(SPECS) > 10 and len(ours.states) > 400


def test_the_garbage_collector_is_paused_only_while_the_saved_parser_loads(monkeypatch: pytest.MonkeyPatch) -> None:
    cached_parser(GRAMMAR)  # built and saved
    assemble, during = parser_cache.assembled, []

    def watched(saved: parser_cache._Saved) -> Lark:
        during.append(gc.isenabled())
        return assemble(saved)

    monkeypatch.setattr(parser_cache, "assembled", watched)
    assert cached_parser(GRAMMAR).parse("a x").children[0] == "x"
    assert (during, gc.isenabled()) == ([False], True)
    gc.disable()
    try:
        cached_parser(GRAMMAR)
        assert not gc.isenabled()  # a caller's own pause is left as it was
    finally:
        gc.enable()
