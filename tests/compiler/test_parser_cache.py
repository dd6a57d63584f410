"""The built parser is kept between commands in the user's own cache folder (compiler/parser_cache.py): a
pickle, so it is loaded only when this user wrote it there, and a damaged file is built again; its table is
read back as lark reads it."""

from __future__ import annotations

import gc
import io
import os
import pickle
import tempfile
from pathlib import Path

import pytest
from lark import Lark
from lark.grammar import Rule
from lark.lexer import TerminalDef
from lark.parsers.lalr_analysis import IntParseTable, Reduce, Shift
from lark.utils import SerializeMemoizer

from spec_audits.base.user_cache import CACHE_ENV
from spec_audits.compiler.clauses import clause_rules
from spec_audits.compiler.parse import GRAMMAR_PATH
from spec_audits.compiler.parser_cache import OPTIONS, TableParser, cache_file, cached_parser
from spec_audits.dispatch import registry

GRAMMAR = 'start: "a" NAME\n%import common.CNAME -> NAME\n%ignore " "\n'
OTHER = 'start: "b"\n'


@pytest.fixture(autouse=True)
def cache_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "cache"))
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    return tmp_path / "cache"


def _saved(grammar: str) -> bytes:
    buffer = io.BytesIO()
    Lark(grammar, **OPTIONS).save(buffer)
    return buffer.getvalue()


def _plant(path: Path, data: bytes, mode: int) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    path.chmod(mode)


class _Runs:
    """A pickle that, when loaded, creates the file it names: what a planted cache file could do."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self) -> tuple[object, tuple[str, str]]:
        return open, (str(self.marker), "w")


def test_the_parser_is_saved_for_this_user_alone_and_loaded_by_the_next_command(cache_folder: Path,
                                                                              tmp_path: Path) -> None:
    built = cached_parser(GRAMMAR)
    path = cache_file(GRAMMAR)
    assert path.parent == cache_folder / "parsers"
    assert (path.stat().st_mode & 0o777, path.parent.stat().st_mode & 0o777) == (0o600, 0o700)
    assert not list((tmp_path / "tmp").iterdir())  # nothing in the shared temporary folder, as lark's cache=True
    loaded = cached_parser(GRAMMAR)
    assert loaded is not built
    assert loaded.parse("a x") == built.parse("a x")
    assert cache_file(OTHER) != path  # keyed by the grammar: a family's clauses make another file


@pytest.mark.parametrize("damage", [b"", b"not a pickle", b"\x80\x04K\x01.", b"%PDF"])
def test_a_damaged_file_is_built_again_and_replaced(damage: bytes) -> None:
    path = cache_file(GRAMMAR)
    _plant(path, damage, 0o600)
    assert cached_parser(GRAMMAR).parse("a x").children[0] == "x"
    assert Lark.load(io.BytesIO(path.read_bytes())).parse("a x").children[0] == "x"  # replaced by one that loads


@pytest.mark.parametrize("mode", [0o644, 0o620, 0o604])
def test_a_file_others_could_write_or_read_is_never_loaded(mode: int, tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    path = cache_file(GRAMMAR)
    _plant(path, pickle.dumps(_Runs(marker)), mode)
    assert cached_parser(GRAMMAR).parse("a x").children[0] == "x"
    assert not marker.exists()
    assert path.stat().st_mode & 0o777 == 0o600  # replaced by this user's own


def test_a_link_to_a_parser_file_is_never_followed(tmp_path: Path) -> None:
    foreign = tmp_path / "elsewhere.lark"
    _plant(foreign, _saved(OTHER), 0o600)  # loadable, but another grammar's
    path = cache_file(GRAMMAR)
    path.parent.mkdir(parents=True)
    path.symlink_to(foreign)
    assert cached_parser(GRAMMAR).parse("a x").children[0] == "x"
    assert not path.is_symlink()
    assert Lark.load(io.BytesIO(foreign.read_bytes())).parse("b")  # the link's target untouched


@pytest.mark.skipif(os.getuid() != 0, reason="giving a file to another user needs root")
def test_another_users_file_is_never_loaded(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    path = cache_file(GRAMMAR)
    _plant(path, pickle.dumps(_Runs(marker)), 0o600)
    os.chown(path, 65534, 65534)
    assert cached_parser(GRAMMAR).parse("a x").children[0] == "x"
    assert not marker.exists()


def test_a_cache_folder_that_cannot_be_written_costs_only_the_time(cache_folder: Path) -> None:
    cache_folder.write_text("a file where the folder should be")
    assert cached_parser(GRAMMAR).parse("a x").children[0] == "x"


def test_the_saved_table_is_read_as_lark_reads_it() -> None:
    saved = pickle.loads(_saved(GRAMMAR_PATH.read_text(encoding="utf-8") + "\n" + clause_rules(registry.syntax())))
    memo = SerializeMemoizer.deserialize(saved["memo"], {"Rule": Rule, "TerminalDef": TerminalDef}, {})
    table = saved["data"]["parser"]["parser"]
    ours = TableParser.deserialize(table, memo, {})._parse_table
    larks = IntParseTable.deserialize(table, memo)
    assert (ours.states, ours.start_states, ours.end_states) == (larks.states, larks.start_states, larks.end_states)
    assert len(ours.states) > 400
    assert {action for actions in ours.states.values() for action, _ in actions.values()} == {Shift, Reduce}


def test_the_garbage_collector_is_paused_only_while_the_saved_parser_loads(monkeypatch: pytest.MonkeyPatch) -> None:
    cached_parser(GRAMMAR)  # built and saved
    load, during = Lark.load, []

    def watched(f: io.BytesIO) -> Lark:
        during.append(gc.isenabled())
        return load(f)

    monkeypatch.setattr(Lark, "load", watched)
    assert cached_parser(GRAMMAR).parse("a x").children[0] == "x"
    assert (during, gc.isenabled()) == ([False], True)
    gc.disable()
    try:
        cached_parser(GRAMMAR)
        assert not gc.isenabled()  # a caller's own pause is left as it was
    finally:
        gc.enable()
