"""The files that pass between stages, read and validated in one place with one error policy.

suite.jsonl and manifest.json (a compiled suite), results.jsonl and run.json (a run folder). Every
command reads them through this module, so every command reports a bad file the same way: a
`ContractError` (exit status 1) naming the file, the line where there is one, what is wrong and what
to do. Nothing is skipped silently; the one repair is the unterminated last line of results.jsonl that
a killed run leaves behind, which is left out (and removed by the next `spec run`, which resumes).
Blank lines hold nothing and are passed over. The schema is the pydantic models in
compiler/suite_model.py and runner/results_model.py.
"""

from __future__ import annotations

import contextlib
import gc
import hashlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

import click
from pydantic import BaseModel, ValidationError

from compiler.suite_model import Manifest, SuiteRow
from runner.results_model import ResultRow, RunInfo

SUITE_FILE = "suite.jsonl"
MANIFEST_FILE = "manifest.json"
RESULTS_FILE = "results.jsonl"
RUN_FILE = "run.json"

RECOMPILE = "the suite is damaged or was edited by hand: compile it again with `spec compile`"
DAMAGED_RUN = "the run folder is damaged: restore run.json, or run again with another --out"
DAMAGED_RESULTS = "remove or repair that line, then run the same `spec run` again to redo what is missing"
CHANGED_SUITE = "the suite changed after the run: use the suite the run was made with, or run again with another --out"

M = TypeVar("M", bound=BaseModel)


class ContractError(click.ClickException):
    """A suite or run file that breaks the contract: `path`, `line` (1-based, or None for the whole
    file), `problem` and `fix`. The message is `path[:line]: problem; fix`, and the exit status is 1."""

    def __init__(self, path: Path | str, problem: str, *, line: int | None = None, fix: str | None = None):
        self.path = Path(path)
        self.line = line
        self.problem = problem
        self.fix = fix
        where = str(path) if line is None else f"{path}:{line}"
        super().__init__(f"{where}: {problem}" + (f"; {fix}" if fix else ""))


@dataclass(frozen=True)
class Suite:
    """A validated compiled suite."""

    path: Path
    manifest: Manifest
    manifest_sha256: str
    rows: list[SuiteRow]

    @property
    def strata(self) -> list[str] | None:
        """The cell keys a --limit subset is stratified over: the suite's balance keys, if any."""
        return self.manifest.balance[0].keys if self.manifest.balance else None


@dataclass(frozen=True)
class ResultsFile:
    """The rows of a results.jsonl, and whether a torn last line (a killed run's) was left out."""

    rows: list[ResultRow]
    torn: bool


def describe(err: ValidationError) -> str:
    """The first problem pydantic found, with where in the object it is."""
    first = err.errors()[0]
    where = ".".join(str(p) for p in first["loc"])
    problem = f"{where}: {first['msg']}" if where else first["msg"]
    more = err.error_count() - 1
    return problem + (f" (and {more} more)" if more else "")


def _validate(model: type[M], data: bytes, path: Path, line: int | None, fix: str) -> M:
    """`data` as `model`; `line` is its line number in a .jsonl file (None for a whole .json file)."""
    try:
        return model.model_validate_json(data)
    except ValidationError as err:
        problem = describe(err)
        if line is not None:  # pydantic counts lines within `data`, which is one line of the file
            problem = problem.replace(" at line 1 column ", " at column ")
        raise ContractError(path, problem, line=line, fix=fix) from None


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """Python's cycle collector paused while a file's rows are built: rows are trees with no cycle to
    find, and each collection would walk every row built so far (a third of reading 15,000 rows)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def read_manifest(folder: Path | str) -> tuple[Manifest, str]:
    """manifest.json of a suite folder, and the sha256 of its bytes (what run.json records)."""
    folder = Path(folder)
    path = folder / MANIFEST_FILE
    if not path.is_file():
        raise ContractError(path, f"missing; is {folder} a compiled suite? (spec compile writes one)")
    data = path.read_bytes()
    return _validate(Manifest, data, path, None, RECOMPILE), hashlib.sha256(data).hexdigest()


def read_suite_rows(path: Path | str) -> list[SuiteRow]:
    """Every row of a suite.jsonl; each line must be a valid row with answers, messages and a unique id."""
    path = Path(path)
    if not path.is_file():
        raise ContractError(path, "missing; give a compiled suite folder or its suite.jsonl (spec compile writes one)")
    rows: list[SuiteRow] = []
    seen: set[str] = set()
    with path.open("rb") as lines, collector_paused():
        for number, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            row = _validate(SuiteRow, line, path, number, RECOMPILE)
            problem = _row_problem(row, seen)
            if problem:
                raise ContractError(path, problem, line=number, fix=RECOMPILE)
            seen.add(row.id)
            rows.append(row)
    if not rows:
        raise ContractError(path, "no rows", fix=RECOMPILE)
    return rows


def _row_problem(row: SuiteRow, seen: set[str]) -> str | None:
    if row.id in seen:
        return f"duplicate id {row.id}"
    if not row.answers:
        return f"row {row.id} has no valid answers"
    if not row.messages:
        return f"row {row.id} has no messages"
    return None


def read_suite(folder: Path | str) -> Suite:
    """A compiled suite folder: manifest.json and suite.jsonl, validated and consistent."""
    folder = Path(folder)
    manifest, sha = read_manifest(folder)
    rows = read_suite_rows(folder / SUITE_FILE)
    if manifest.rows != len(rows):
        raise ContractError(
            folder / MANIFEST_FILE, f"says rows={manifest.rows}, {SUITE_FILE} has {len(rows)}", fix=RECOMPILE
        )
    return Suite(path=folder, manifest=manifest, manifest_sha256=sha, rows=rows)


def complete_lines(data: bytes) -> tuple[bytes, bool]:
    """`data` up to its last newline, and whether an unterminated (torn) last line was cut off."""
    end = data.rfind(b"\n") + 1
    return data[:end], end != len(data)


def read_results_file(path: Path | str) -> ResultsFile:
    """Every row of a results.jsonl (none if the file does not exist yet); a torn last line is left out."""
    path = Path(path)
    if not path.is_file():
        return ResultsFile([], torn=False)
    data, torn = complete_lines(path.read_bytes())
    with collector_paused():
        rows = [
            _validate(ResultRow, line, path, number, DAMAGED_RESULTS)
            for number, line in enumerate(data.split(b"\n"), start=1)
            if line.strip()
        ]
    return ResultsFile(rows, torn)


def read_results(path: Path | str) -> list[ResultRow]:
    """The rows of a results.jsonl, as read_results_file reads them."""
    return read_results_file(path).rows


def find_run_info(run_dir: Path | str) -> RunInfo | None:
    """run.json of a run folder, or None if the folder holds none (yet)."""
    path = Path(run_dir) / RUN_FILE
    return _validate(RunInfo, path.read_bytes(), path, None, DAMAGED_RUN) if path.is_file() else None


def read_run_info(run_dir: Path | str) -> RunInfo:
    """run.json of a run folder, which must exist."""
    info = find_run_info(run_dir)
    if info is None:
        raise ContractError(Path(run_dir) / RUN_FILE, f"missing; is {run_dir} a run folder? (spec run writes one)")
    return info


def check_run_matches_suite(run_dir: Path | str, info: RunInfo, suite: Suite) -> None:
    """Refuse a run whose recorded suite hash is not the suite's, naming both hashes."""
    if info.suite_manifest_sha256 != suite.manifest_sha256:
        raise ContractError(
            Path(run_dir) / RUN_FILE,
            f"the run was made on a suite whose {MANIFEST_FILE} has sha256 {info.suite_manifest_sha256}, "
            f"but {suite.path / MANIFEST_FILE} has sha256 {suite.manifest_sha256}",
            fix=CHANGED_SUITE,
        )


def suite_dir_of(run_dir: Path | str, info: RunInfo) -> Path:
    """The suite folder run.json names: as written (relative to the working folder), else relative to the run."""
    run_dir = Path(run_dir)
    for candidate in (Path(info.suite_dir), run_dir / info.suite_dir):
        if (candidate / MANIFEST_FILE).is_file():
            return candidate
    raise ContractError(
        run_dir / RUN_FILE,
        f"suite_dir: suite folder {info.suite_dir!r} not found",
        fix="run from the folder the run was made in, or put the suite back where run.json says",
    )


def read_run(run_dir: Path | str) -> tuple[RunInfo, Suite]:
    """A run folder's run.json and the suite it names, checked to be the suite the run was made on."""
    info = read_run_info(run_dir)
    suite = read_suite(suite_dir_of(run_dir, info))
    check_run_matches_suite(run_dir, info, suite)
    return info, suite
