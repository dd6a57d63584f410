"""Checks of a bundle folder or a compiled suite, each failure named by file and row.

A compiled suite: the manifest's hashes and counts against the files and rows, every row against the
project's own row schema (the folder's schema.json is compared with it as data, never used or
resolved), every row's id against its content, every puzzle re-proved with Z3. A bundle adds SHA256SUMS
(every member hashed, none missing or unlisted, none larger than listed), a recompile of the bundled spec
in a budgeted child process (runner/commands/publish/recompile.py) compared byte for byte with the suite, and
the provenance recomputed (runner/commands/publish/provenance.py). Every file is read through
runner/commands/publish/members.py: only the folder's own plain files, never a path as a stranger's file spells it.
"""

from __future__ import annotations

import json
import tempfile
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema
import referencing

from spec_audits.base.safe_files import read_bytes_capped
from spec_audits.compiler.budget import DEFAULT_BUDGET
from spec_audits.contract.reader import MANIFEST_FILE, SUITE_FILE, ContractError, Suite, read_manifest, read_suite
from spec_audits.contract.suite_model import SuiteRow
from spec_audits.contract.writer import content_id, file_sha256
from spec_audits.puzzles.verify import reprove_row
from spec_audits.runner.commands.publish.members import DEFAULT_CAPS, Caps, MemberError, Members, name_problem
from spec_audits.runner.commands.publish.provenance import check_provenance, read_recipe
from spec_audits.runner.commands.publish.recompile import Limits, recompile
from spec_audits.runner.commands.publish.sums import SUMS_FILE, parse_sums
from spec_audits.runner.progress import progress

SCHEMA_FILE = "schema.json"
SUITE_FILES = (SUITE_FILE, MANIFEST_FILE, SCHEMA_FILE)
SHOWN = 20
"""Failures listed per check; the rest are counted."""
BAR_FROM = 10_000
"""Rows from which the row check shows a progress bar (puzzles always do: each takes a while)."""


@dataclass(frozen=True)
class Options:
    """How `spec verify` checks: Z3's steps per puzzle check (None: the compiler's limit), the recompile's
    budget, the caps on what a bundle may hold, and where progress goes (`say` takes a line; `bars` shows
    the row bar)."""

    rlimit: int | None = None
    seconds: float = 300.0
    memory_mib: int = 2048
    caps: Caps = DEFAULT_CAPS
    say: Callable[[str], None] = field(default=lambda line: None)
    bars: bool = False


@cache
def row_schema() -> dict[str, Any]:
    """The project's own JSON Schema of a row: what `spec compile` writes as schema.json."""
    schema: dict[str, Any] = json.loads(json.dumps(SuiteRow.model_json_schema(), sort_keys=True))
    return schema


def check_sums(members: Members) -> list[str]:
    """Every member listed in SHA256SUMS present with its size and hash, none unlisted; a member larger
    than listed is not read."""
    try:
        listing = parse_sums(members.small(SUMS_FILE).decode("utf-8", errors="replace"))
    except MemberError as err:
        return [f"{err}; this is not a bundle written by `spec bundle`"]
    failures = list(listing.problems)
    present = set(members.sizes) - {SUMS_FILE}
    failures += [f"{name}: missing (listed in {SUMS_FILE})" for name in sorted(listing.sha256.keys() - present)]
    failures += [f"{name}: not listed in {SUMS_FILE}" for name in sorted(present - listing.sha256.keys())]
    for name in sorted(present & listing.sha256.keys()):
        size, promised = members.sizes[name], listing.sizes.get(name, 0)
        if size > promised:
            failures.append(f"{name}: {size:,} bytes, more than the {promised:,} {SUMS_FILE} lists (not read)")
        elif (actual := file_sha256(members.root / name)) != listing.sha256[name]:
            failures.append(f"{name}: sha256 is {actual}, {SUMS_FILE} says {listing.sha256[name]}")
    return failures


def _manifest_problems(suite: Suite, members: Members) -> Iterator[str]:
    manifest = suite.manifest
    for name, digest in sorted(manifest.files.items()):
        problem = name_problem(name)
        path = members.path(name)
        if problem or path is None:
            yield f"{MANIFEST_FILE}: files names {name!r}, which {problem or 'is missing'}"
        elif (actual := file_sha256(path)) != digest:
            yield f"{name}: sha256 is {actual}, {MANIFEST_FILE} says {digest}"
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


def _schema_problems(members: Members) -> list[str]:
    """schema.json compared, as data, with the project's own row schema (which is what rows are checked
    against: a stranger's schema is never used, so its $ref is never fetched or opened)."""
    try:
        theirs = members.json(SCHEMA_FILE)
    except MemberError as err:
        return [str(err)]
    if theirs != row_schema():
        return [f"{SCHEMA_FILE}: is not the row schema of this version of spec; rows are checked against spec's own"]
    return []


def _row_problems(suite: Suite, options: Options) -> Iterator[str]:
    schema = row_schema()
    validator = jsonschema.validators.validator_for(schema)(schema, registry=referencing.Registry())
    lines = read_bytes_capped(suite.path.joinpath(SUITE_FILE)).split(b"\n")
    numbered = [(number, line) for number, line in enumerate(lines, start=1) if line.strip()]
    puzzles = sum(1 for row in suite.rows if row.puzzle)
    bar = progress(len(suite.rows), 0, options.bars and (puzzles > 0 or len(suite.rows) >= BAR_FROM), unit="rows")
    for (number, line), row in zip(numbered, suite.rows, strict=True):
        where = f"{SUITE_FILE}:{number} (row {row.id})"
        if (fresh := content_id(row)) != row.id:
            yield f"{where}: id does not match the row's content, which hashes to {fresh}: the row was edited"
        for error in validator.iter_errors(json.loads(line)):
            path = "/".join(str(p) for p in error.absolute_path)
            yield f"{where}: schema: {error.message}" + (f" at {path}" if path else "")
        if row.puzzle:
            yield from (f"{where}: puzzle: {problem}" for problem in reprove_row(row, options.rlimit))
        bar.update()
    bar.close()


def check_suite(members: Members, options: Options) -> tuple[list[str], Counter[str], Suite]:
    """The suite's failures, how many rows and puzzles were checked, and the suite; a ContractError when
    spec_audits/contract/reader.py cannot read it."""
    suite = read_suite(members.root)
    counts = Counter(rows=len(suite.rows), puzzles=sum(1 for row in suite.rows if row.puzzle))
    options.say(f"checking {counts['rows']:,} rows ({counts['puzzles']:,} puzzles to re-prove)")
    failures = [*_manifest_problems(suite, members), *_schema_problems(members), *_row_problems(suite, options)]
    return failures, counts, suite


def _differing_line(ours: Path | None, fresh: Path) -> int | None:
    """The first line where a bundle's file differs from the recompiled one (None when equal)."""
    if ours is None:
        return 1
    if file_sha256(ours) == file_sha256(fresh):
        return None
    number = 0
    with ours.open("rb") as a, fresh.open("rb") as b:
        for number, (x, y) in enumerate(zip(a, b, strict=False), start=1):
            if x != y:
                return number
    return number + 1


def _limits(members: Members, suite: Suite | None, options: Options) -> Limits:
    """The recompile's budget: the options' time and memory; the rows, trials and bytes of the suite it
    must reproduce, as its manifest says (a compile going past them cannot reproduce it)."""
    try:
        manifest = suite.manifest if suite else read_manifest(members.root)[0]
        rows, trials = manifest.rows, manifest.trials
    except ContractError:
        rows, trials = DEFAULT_BUDGET.rows, DEFAULT_BUDGET.trials
    return Limits(seconds=options.seconds, memory_mib=options.memory_mib, rows=rows, trials=trials,
                  file_bytes=members.sizes.get(SUITE_FILE, 0) + 2**20)


def check_recompile(members: Members, suite: Suite | None, options: Options) -> list[str]:
    """The bundled spec compiled again (in the budgeted child), compared byte for byte with the suite;
    then the provenance checked against the files it read."""
    try:
        recipe = read_recipe(members)
    except MemberError as err:
        return [str(err)]
    root = members.root.resolve()
    limits = _limits(members, suite, options)
    options.say(f"recompiling {recipe.shown} (at most {limits.seconds:g} s and {limits.memory_mib} MiB)")
    with tempfile.TemporaryDirectory(prefix="spec-verify-") as scratch:
        fresh = Path(scratch) / "suite"
        done = recompile(root, root / recipe.compile_dir, Path(recipe.spec), fresh, limits, recipe.shown)
        failures = [done.failure] if done.failure else []
        for name in SUITE_FILES if not failures else ():
            line = _differing_line(members.path(name), fresh / name)
            if line is not None:
                failures.append(f"{name}: differs from a recompile of {recipe.shown} (first at line {line})")
    options.say("checking the sources, licences, dataset card and croissant.json")
    return failures + check_provenance(members, suite, done.read, recipe.shown)


def check_bundle(members: Members, options: Options) -> tuple[list[str], Counter[str]]:
    """Every check of a bundle folder; a suite the contract refuses is one failure among the others."""
    options.say(f"checking {SUMS_FILE} ({len(members.sizes):,} files)")
    failures = check_sums(members)
    try:
        found, counts, suite = check_suite(members, options)
    except ContractError as err:
        found, counts, suite = [err.message], Counter(), None
    return [*failures, *found, *check_recompile(members, suite, options)], counts


def capped(failures: list[str]) -> list[str]:
    more = len(failures) - SHOWN
    return failures[:SHOWN] + ([f"... and {more} more"] if more > 0 else [])
