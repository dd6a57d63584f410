"""Compiled templates, kept between commands in the user's own cache folder.

Compiling a template (lexing, parsing, the sandbox's metering, generating Python and compiling it) and
finding the names it reads take most of a warm `spec check`; loading what an earlier command found takes a
small part of that. An entry holds, for one template text, the compiled code (marshal), the names of the
design the template reads, its simple reads (spec_audits.compiler.templates) and its syntax tree as plain
tuples, which the checks walk as they walk a fresh parse.

A file there is code this process will run, so it is read only from the user's own folder and only when
this user wrote it (spec_audits.base.user_cache.read_private), and used only when its digest matches the one
this process computes over everything that shapes an entry (the template text, jinja2's version, Python's,
the bytes of the modules that compile and meter templates) and over the entry's own bytes: a damaged,
stale or foreign entry is never loaded but built again and replaced. Only templates that compile are kept:
a mistake is always found by a fresh compile, so its message is the same. A cache folder that cannot be
written costs only the time.
"""

from __future__ import annotations

import contextlib
import hashlib
import marshal
import os
import sys
from functools import lru_cache
from importlib.util import source_hash
from pathlib import Path
from types import CodeType
from typing import Any

import jinja2
from jinja2 import nodes

from spec_audits.base.records import Record
from spec_audits.base.user_cache import cache_dir, read_private, write_private
from spec_audits.compiler.sandbox import environment

FOLDER = "templates"  # under the user cache folder
SUFFIX = ".jinja"
SOURCES = ("sandbox.py", "templates.py", "template_cache.py")  # the modules whose code shapes an entry
MAX_ENTRIES = 4096  # past this many, writing an entry drops the oldest quarter
_FORMAT = 1
_DIGEST = 32  # bytes of each BLAKE2b digest
Reads = tuple[tuple[str, str | None], ...] | None


class Entry(Record):
    """What compiling one template text found."""

    code: CodeType
    names: frozenset[str]
    reads: Reads
    tree: nodes.Template


class _Invalid(Exception):
    """An entry that is not what this module writes."""


@lru_cache(maxsize=1024)
def load(source: str) -> Entry | None:
    """The entry of this template text, when this user's cache folder holds a sound one."""
    key = _key(source)
    data = read_private(_path(key))
    if data is None or len(data) <= _DIGEST:
        return None
    payload = memoryview(data)[_DIGEST:]
    if data[:_DIGEST] != _digest(key, payload):
        return None
    try:
        return _entry(marshal.loads(payload))
    except (_Invalid, ValueError, EOFError, TypeError, RecursionError):
        return None


def save(source: str, entry: Entry) -> None:
    """Keep the entry for the next command; a tree too deep to keep, or a folder that cannot be written,
    keeps nothing."""
    try:
        payload = marshal.dumps((_FORMAT, entry.code, tuple(sorted(entry.names)), entry.reads, _dump(entry.tree)))
    except (_Invalid, ValueError, RecursionError):
        return
    key = _key(source)
    path = _path(key)
    with contextlib.suppress(OSError):
        write_private(path, _digest(key, payload) + payload)
        _prune(path.parent)


def _key(source: str) -> bytes:
    """A hash of everything that shapes the entry of `source`: it names the entry's file and keys its digest."""
    text = "\0".join((source, jinja2.__version__, sys.version, _compiler_version()))
    return hashlib.blake2b(text.encode(), digest_size=_DIGEST).digest()


def _path(key: bytes) -> Path:
    return cache_dir() / FOLDER / f"{key.hex()}{SUFFIX}"


def _digest(key: bytes, payload: bytes | memoryview) -> bytes:
    """The entry's bytes hashed under its key: an entry is sound only for the key it was written for."""
    return hashlib.blake2b(payload, key=key, digest_size=_DIGEST).digest()


@lru_cache(maxsize=1)
def _compiler_version() -> str:
    """A hash of the modules whose code shapes an entry: the sandbox (metering, environment), the template
    checks (reads) and this one (the entry's layout). Python's hash of source files for bytecode caches: a
    change to our own code is what it tells, and it costs a tenth of SHA-256."""
    folder = os.path.dirname(__file__)
    return ",".join(source_hash(Path(folder, name).read_bytes()).hex() for name in SOURCES)


def _prune(folder: Path) -> None:
    """At most MAX_ENTRIES entries: past that, the least recently written quarter goes."""
    entries = [entry for entry in os.scandir(folder) if entry.name.endswith(SUFFIX)]
    if len(entries) <= MAX_ENTRIES:
        return
    entries.sort(key=lambda entry: entry.stat().st_mtime_ns)
    for entry in entries[:len(entries) - MAX_ENTRIES * 3 // 4]:
        Path(entry.path).unlink(missing_ok=True)


def _entry(data: Any) -> Entry:
    if not (isinstance(data, tuple) and len(data) == 5 and data[0] == _FORMAT and isinstance(data[1], CodeType)
            and isinstance(data[2], tuple) and all(isinstance(name, str) for name in data[2])):
        raise _Invalid
    tree = _node(data[4], environment())
    if not isinstance(tree, nodes.Template):
        raise _Invalid
    return Entry(data[1], frozenset(data[2]), _reads(data[3]), tree)


def _reads(data: Any) -> Reads:
    if data is None:
        return None
    if isinstance(data, tuple) and all(isinstance(read, tuple) and len(read) == 2 and isinstance(read[0], str)
                                       and (read[1] is None or isinstance(read[1], str)) for read in data):
        return data
    raise _Invalid


# A syntax tree as plain values marshal keeps: a node is (its class name, its line (None for some nodes the
# parser makes), its fields...), a tuple among the fields is ("", its items...), a list a list; the rest are
# the constants the parser makes.
_NODES = {cls.__name__: cls for cls in vars(nodes).values()
          if isinstance(cls, type) and issubclass(cls, nodes.Node) and not cls.abstract}
_CONSTANTS = (str, int, float, complex, bytes, type(None))


def _dump(value: Any) -> Any:
    if isinstance(value, nodes.Node):
        if _NODES.get(type(value).__name__) is not type(value):
            raise _Invalid
        return (type(value).__name__, value.lineno, *(_dump(getattr(value, name)) for name in value.fields))
    if isinstance(value, list):
        return [_dump(item) for item in value]
    if isinstance(value, tuple):
        return ("", *(_dump(item) for item in value))
    if isinstance(value, _CONSTANTS):
        return value
    raise _Invalid


def _node(data: Any, env: jinja2.Environment) -> Any:
    """The value `_dump` wrote, each node given the environment as jinja2's parser gives it."""
    if isinstance(data, list):
        return [_node(item, env) for item in data]
    if not isinstance(data, tuple):
        if isinstance(data, _CONSTANTS):
            return data
        raise _Invalid
    if not data or not isinstance(data[0], str):
        raise _Invalid
    if data[0] == "":
        return tuple(_node(item, env) for item in data[1:])
    cls = _NODES.get(data[0])
    if cls is None or len(data) != 2 + len(cls.fields) or not isinstance(data[1], int | None):
        raise _Invalid
    node = object.__new__(cls)
    for name, value in zip(cls.fields, data[2:], strict=True):
        setattr(node, name, value if type(value) is str else _node(value, env))  # most leaves are names
    vars(node).update(lineno=data[1], environment=env)
    return node
