"""Checks of a bundle folder or a compiled suite, each failure named by file and row.

A compiled suite: the manifest's hashes and counts against the files and rows, every row against
schema.json (jsonschema), every puzzle re-proved with Z3. A bundle adds SHA256SUMS (every member hashed,
none missing or unlisted) and a recompile of the bundled spec, compared byte for byte with the suite.
"""

from __future__ import annotations

import contextlib
import json
import tempfile
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema

from compiler.build import compile_file
from compiler.emit import file_sha256
from compiler.errors import SpecError
from compiler.files import spec_roots
from compiler.puzzles.verify import reprove_row
from runner.contract import MANIFEST_FILE, SUITE_FILE, Suite, read_suite
from runner.publish.sources import read_by

SUMS_FILE = "SHA256SUMS"
BUNDLE_FILE = "bundle.json"
SCHEMA_FILE = "schema.json"
SUITE_FILES = (SUITE_FILE, MANIFEST_FILE, SCHEMA_FILE)
SHOWN = 20
"""Failures listed per check; the rest are counted."""


def sums_text(folder: Path) -> str:
    """SHA256SUMS for every file of `folder` but itself, in `sha256sum -c` format, sorted by path."""
    names = sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file())
    return "".join(f"{file_sha256(folder / name)}  {name}\n" for name in names if name != SUMS_FILE)


def check_sums(folder: Path) -> list[str]:
    """Every member listed in SHA256SUMS present with its hash, and no member left unlisted."""
    path = folder / SUMS_FILE
    if not path.is_file():
        return [f"{SUMS_FILE}: missing; this is not a bundle written by `spec bundle`"]
    listed: dict[str, str] = {}
    failures = []
    for number, line in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), start=1):
        digest, _, name = line.partition("  ")
        if len(digest) != 64 or not name:
            failures.append(f"{SUMS_FILE}:{number}: not '<sha256>  <path>'")
        listed[name] = digest
    present = {p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file()} - {SUMS_FILE}
    for name in sorted(listed.keys() - present):
        failures.append(f"{name}: missing (listed in {SUMS_FILE})")
    for name in sorted(present - listed.keys()):
        failures.append(f"{name}: not listed in {SUMS_FILE}")
    for name in sorted(present & listed.keys()):
        actual = file_sha256(folder / name)
        if actual != listed[name]:
            failures.append(f"{name}: sha256 is {actual}, {SUMS_FILE} says {listed[name]}")
    return failures


def _manifest_problems(suite: Suite) -> Iterator[str]:
    manifest = suite.manifest
    for name, digest in sorted(manifest.files.items()):
        path = suite.path / name
        if not path.is_file():
            yield f"{MANIFEST_FILE}: files lists {name}, which is missing"
        elif file_sha256(path) != digest:
            yield f"{name}: sha256 is {file_sha256(path)}, {MANIFEST_FILE} says {digest}"
    trials = sum(row.samples for row in suite.rows)
    if manifest.trials != trials:
        yield f"{MANIFEST_FILE}: says trials={manifest.trials}, {SUITE_FILE} has {trials}"
    distinct: dict[str, set[object]] = {}
    for row in suite.rows:
        for key, value in row.cell.items():
            distinct.setdefault(key, set()).add(value)
    cells = {key: len(values) for key, values in sorted(distinct.items())}
    if manifest.cells != cells:
        yield f"{MANIFEST_FILE}: says cells={manifest.cells}, {SUITE_FILE} has {cells}"


def _row_problems(suite: Suite, timeout_ms: int) -> Iterator[str]:
    schema = json.loads((suite.path / SCHEMA_FILE).read_text(encoding="utf-8"))
    validator = jsonschema.validators.validator_for(schema)(schema)
    lines = suite.path.joinpath(SUITE_FILE).read_bytes().split(b"\n")
    numbered = [(number, line) for number, line in enumerate(lines, start=1) if line.strip()]
    for (number, line), row in zip(numbered, suite.rows, strict=True):
        where = f"{SUITE_FILE}:{number} (row {row.id})"
        for error in validator.iter_errors(json.loads(line)):
            path = "/".join(str(p) for p in error.absolute_path)
            yield f"{where}: schema: {error.message}" + (f" at {path}" if path else "")
        if row.puzzle:
            yield from (f"{where}: puzzle: {problem}" for problem in reprove_row(row, timeout_ms))


def check_suite(folder: Path, timeout_ms: int) -> tuple[list[str], Counter[str]]:
    """The suite's failures, and how many rows and puzzles were checked; a ContractError when
    runner/contract.py cannot read it."""
    suite = read_suite(folder)
    if not (folder / SCHEMA_FILE).is_file():
        return [f"{SCHEMA_FILE}: missing"], Counter()
    counts = Counter(rows=len(suite.rows), puzzles=sum(1 for row in suite.rows if row.puzzle))
    return [*_manifest_problems(suite), *_row_problems(suite, timeout_ms)], counts


def _first_difference(a: bytes, b: bytes) -> int:
    lines = zip(a.split(b"\n"), b.split(b"\n"), strict=False)
    return next((number for number, (x, y) in enumerate(lines, start=1) if x != y), min(a, b, key=len).count(b"\n") + 1)


class _Unusable(Exception):
    """bundle.json cannot say where to recompile from; the message is the one failure to report."""


def _recipe(folder: Path) -> tuple[dict[str, Any], Path, Path, str]:
    """bundle.json, the compile folder and the spec it names (checked to stay in the bundle), and how
    failures name the spec."""
    try:
        info = json.loads((folder / BUNDLE_FILE).read_text(encoding="utf-8"))
        compile_dir, spec = (folder / info["compile_dir"]).resolve(), Path(info["spec"])
    except (OSError, ValueError, KeyError, TypeError) as err:
        raise _Unusable(f"{BUNDLE_FILE}: unreadable ({err})") from None
    if not compile_dir.is_relative_to(folder) or spec.is_absolute() or ".." in spec.parts:
        raise _Unusable(f"{BUNDLE_FILE}: compile_dir or spec leaves the bundle folder")
    shown = f"{info['compile_dir']}/{info['spec']}"
    if not (compile_dir / spec).is_file():
        raise _Unusable(f"{shown}: missing, so the suite cannot be recompiled")
    return info, compile_dir, spec, shown


def check_sources(folder: Path) -> list[str]:
    """The files the bundled spec reads are the sources bundle.json lists, each with its role and the
    sha256 it records (so the licences recorded cover every file compiled, and an imported spec or data
    file is hashed as the main spec is in the manifest)."""
    folder = folder.resolve()
    try:
        info, compile_dir, spec, shown = _recipe(folder)
        with contextlib.chdir(compile_dir), spec_roots(spec, (folder / "sources",)):
            read = {path.relative_to(folder).as_posix(): role for path, role in read_by(spec).items()}
        listed = {entry["path"]: entry for entry in info["sources"]}
    except (_Unusable, SpecError, ValueError, KeyError, TypeError):
        return []  # check_recompile names why the spec cannot be compiled
    failures = [f"{name}: read by {shown} but not listed in {BUNDLE_FILE}" for name in sorted(read.keys() - listed)]
    failures += [f"{BUNDLE_FILE}: lists {name}, which {shown} does not read" for name in sorted(listed.keys() - read)]
    for name in sorted(read.keys() & listed.keys()):
        entry, path = listed[name], folder / name
        if entry.get("role") != read[name]:
            failures.append(f"{name}: {BUNDLE_FILE} says role {entry.get('role')}, {shown} reads it as {read[name]}")
        if path.is_file() and file_sha256(path) != entry.get("sha256"):
            failures.append(f"{name}: sha256 is {file_sha256(path)}, {BUNDLE_FILE} says {entry.get('sha256')}")
    return failures


def check_recompile(folder: Path) -> list[str]:
    """The bundled spec compiled again in the bundle's sources/, compared byte for byte with the suite."""
    folder = folder.resolve()  # the compile below runs in the bundle's compile folder
    try:
        _, compile_dir, spec, shown = _recipe(folder)
    except _Unusable as err:
        return [str(err)]
    with tempfile.TemporaryDirectory(prefix="spec-verify-") as scratch, contextlib.chdir(compile_dir):
        fresh = Path(scratch) / "suite"
        try:
            compile_file(spec, fresh, allowed=(folder / "sources",))  # what the bundle holds, nothing else
        except SpecError as err:
            return [f"{shown}: does not compile:\n{err}"]
        failures = []
        for name in SUITE_FILES:
            ours = (folder / name).read_bytes() if (folder / name).is_file() else b""
            theirs = (fresh / name).read_bytes()
            if ours != theirs:
                line = _first_difference(ours, theirs)
                failures.append(f"{name}: differs from a recompile of {shown} (first at line {line})")
        return failures


def capped(failures: list[str]) -> list[str]:
    more = len(failures) - SHOWN
    return failures[:SHOWN] + ([f"... and {more} more"] if more > 0 else [])
