"""The files that pass between stages, read and validated in one place with one error policy.

suite.jsonl and manifest.json (a compiled suite), results.jsonl and run.json (a run folder). Every
command reads them through this module, so every command reports a bad file the same way: a
`ContractError` (exit status 1) naming the file, the line where there is one, what is wrong and what
to do. Nothing is skipped silently; the one repair is the unterminated last line of results.jsonl that
a killed run leaves behind, which is left out (and removed by the next `spec run`, which resumes).
Blank lines hold nothing and are passed over. The schema is the pydantic models in
spec_audits/contract/suite_model.py and spec_audits/contract/results_model.py.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

import click
from pydantic import BaseModel, ValidationError

from spec_audits.base.collector import collector_paused
from spec_audits.base.safe_files import DOCUMENT_BYTES, iter_lines_capped, open_regular, present, read_bytes_capped
from spec_audits.contract.results_model import ResultRow, RunInfo
from spec_audits.contract.suite_model import Manifest, SuiteRow
from spec_audits.contract.suite_terms import DECODE_KEYS
from spec_audits.contract.unique_ids import IdHashes

SUITE_FILE = "suite.jsonl"
MANIFEST_FILE = "manifest.json"
RESULTS_FILE = "results.jsonl"
RUN_FILE = "run.json"

RECOMPILE = "the suite is damaged or was edited by hand: compile it again with `spec compile`"
DAMAGED_RUN = "the run folder is damaged: restore run.json, or run again with another --out"
DAMAGED_RESULTS = "remove or repair that line, then run the same `spec run` again to redo what is missing"
CHANGED_SUITE = "the suite changed after the run: use the suite the run was made with, or run again with another --out"
NOT_COMPILED = (
    "a suite carries data and decode settings only; endpoints, keys, headers and mock replies come from your "
    "command line and environment: do not run this suite, compile its spec yourself with `spec compile`"
)
EDITED_SUITE = "the suite was changed after it was compiled: compile it again with `spec compile`, or get the original"

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
class SuiteHead:
    """A validated compiled suite without its rows (`scan_suite` read them once, in a stream); `sha256` is
    suite.jsonl's, as read."""

    path: Path
    manifest: Manifest
    manifest_sha256: str
    sha256: str

    @property
    def strata(self) -> list[str] | None:
        """The cell keys a --limit subset is stratified over: the suite's balance keys, if any."""
        return self.manifest.balance[0].keys if self.manifest.balance else None


@dataclass(frozen=True)
class Suite(SuiteHead):
    """A validated compiled suite with every row in memory."""

    rows: list[SuiteRow]


@dataclass(frozen=True)
class ResultsFile:
    """The rows of a results.jsonl, their line numbers, and whether a torn last line (a killed run's) was
    left out."""

    rows: list[ResultRow]
    torn: bool
    lines: list[int] = field(default_factory=list)


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
        raise ContractError(path, _problem(err, line), line=line, fix=fix) from None


def _problem(err: ValidationError, line: int | None) -> str:
    problem = describe(err)
    if line is not None:  # pydantic counts lines within `data`, which is one line of the file
        problem = problem.replace(" at line 1 column ", " at column ")
    return problem


def read_manifest(folder: Path | str) -> tuple[Manifest, str]:
    """manifest.json of a suite folder, and the sha256 of its bytes (what run.json records)."""
    folder = Path(folder)
    path = folder / MANIFEST_FILE
    if not present(path):
        raise ContractError(path, f"missing; is {folder} a compiled suite? (spec compile writes one)")
    data = read_bytes_capped(path, DOCUMENT_BYTES)
    return _validate(Manifest, data, path, None, RECOMPILE), hashlib.sha256(data).hexdigest()


def read_suite_rows(path: Path | str) -> list[SuiteRow]:
    """Every row of a suite.jsonl; each line must be a valid row with answers, messages and a unique id."""
    rows: list[SuiteRow] = []
    _scan_rows(Path(path), lambda offset, row: rows.append(row))
    return rows


def _scan_rows(path: Path, visit: Callable[[int, SuiteRow], None]) -> tuple[int, str]:
    """Validate every row of a suite.jsonl in one pass, hashing the file as it is read, and hand each row with its
    byte offset to `visit`; the number of rows and the file's sha256. Only 8 bytes per row are kept (a hash of
    its id, for unique_ids.py's check), so a caller that keeps nothing reads any size in constant memory."""
    if not present(path):
        raise ContractError(path, "missing; give a compiled suite folder or its suite.jsonl (spec compile writes one)")
    ids = IdHashes()
    digest = hashlib.sha256()
    offset = 0
    with open_regular(path) as handle, collector_paused():
        for number, line in enumerate(iter_lines_capped(handle, path), start=1):
            digest.update(line)
            if line.strip():
                row = _validate_row(line, path, number)
                problem = _row_problem(row)
                if problem:
                    raise ContractError(path, problem, line=number, fix=RECOMPILE)
                ids.add(row.id)
                visit(offset, row)
            offset += len(line)
    if not ids:
        raise ContractError(path, "no rows", fix=RECOMPILE)
    repeat = ids.first_repeat(path)
    if repeat is not None:
        raise ContractError(path, f"duplicate id {repeat[1]}", line=repeat[0], fix=RECOMPILE)
    return len(ids), digest.hexdigest()


def read_rows_at(path: Path, offsets: Iterable[int]) -> Iterator[SuiteRow]:
    """The rows of a suite.jsonl that `scan_suite` already checked, read again one at a time at their byte
    offsets, so that a run holds only the rows in flight."""
    for offset, line in read_lines_at(path, offsets):
        yield _validate(SuiteRow, line, path, None, f"it changed while it was read (at byte {offset}): "
                        f"leave a suite alone while it runs; {RECOMPILE}")


def read_lines_at(path: Path, offsets: Iterable[int]) -> Iterator[tuple[int, bytes]]:
    """Each offset of `offsets` (found by an earlier pass) and the line of a .jsonl file that starts there."""
    with open_regular(path) as lines:
        for offset in offsets:
            lines.seek(offset)
            yield offset, lines.readline()


def _validate_row(line: bytes, path: Path, number: int) -> SuiteRow:
    """One suite row. A key the closed schema does not know is named with the row's id: such a suite was
    not written by `spec compile` (it may be a stranger's attempt to configure the call)."""
    try:
        return SuiteRow.model_validate_json(line)
    except ValidationError as err:
        extra = next((e["loc"] for e in err.errors() if e["type"] == "extra_forbidden"), None)
        if extra is None:
            raise ContractError(path, _problem(err, number), line=number, fix=RECOMPILE) from None
        where = ".".join(str(p) for p in extra)
        what = "a field a suite row may carry"
        if "decode" in extra[:-1]:
            what = f"a decode setting (a suite may set {', '.join(DECODE_KEYS)})"
        raise ContractError(path, f"{_row_id(line)}{where}: {extra[-1]!r} is not {what}", line=number,
                            fix=NOT_COMPILED) from None


def _row_id(line: bytes) -> str:
    """'row ID: ' naming the id a row claims, for messages about a row that does not validate ('' if none)."""
    try:
        found = json.loads(line).get("id")
    except (ValueError, AttributeError):
        found = None
    return f"row {found}: " if isinstance(found, str) and found.isalnum() and len(found) <= 64 else ""


def _row_problem(row: SuiteRow) -> str | None:
    if not row.answers:
        return f"row {row.id} has no valid answers"
    if not row.messages:
        return f"row {row.id} has no messages"
    return None


def read_suite(folder: Path | str) -> Suite:
    """A compiled suite folder: manifest.json and suite.jsonl, validated and consistent, every row in memory."""
    rows: list[SuiteRow] = []
    return _with_rows(scan_suite(folder, lambda offset, row: rows.append(row)), rows)


def _with_rows(head: SuiteHead, rows: list[SuiteRow]) -> Suite:
    return Suite(path=head.path, manifest=head.manifest, manifest_sha256=head.manifest_sha256, sha256=head.sha256,
                 rows=rows)


def scan_suite(folder: Path | str, visit: Callable[[int, SuiteRow], None]) -> SuiteHead:
    """A compiled suite folder read in one stream: manifest.json, and every row of suite.jsonl validated and handed
    to `visit` with its byte offset (see `read_rows_at`), the count checked against the manifest."""
    folder = Path(folder)
    manifest, sha = read_manifest(folder)
    count, suite_sha = _scan_rows(folder / SUITE_FILE, visit)
    if manifest.rows != count:
        raise ContractError(
            folder / MANIFEST_FILE, f"says rows={manifest.rows}, {SUITE_FILE} has {count}", fix=RECOMPILE
        )
    return SuiteHead(path=folder, manifest=manifest, manifest_sha256=sha, sha256=suite_sha)


def check_suite_integrity(suite: SuiteHead) -> None:
    """Refuse a suite.jsonl whose sha256 is not the one its manifest.json records."""
    recorded = suite.manifest.files.get(SUITE_FILE)
    if recorded is None:
        raise ContractError(suite.path / MANIFEST_FILE, f"files: records no sha256 of {SUITE_FILE}", fix=RECOMPILE)
    if recorded != suite.sha256:
        raise ContractError(
            suite.path / SUITE_FILE,
            f"sha256 is {suite.sha256}, but {MANIFEST_FILE} records {recorded}",
            fix=EDITED_SUITE,
        )


def complete_lines(data: bytes) -> tuple[bytes, bool]:
    """`data` up to its last newline, and whether an unterminated (torn) last line was cut off."""
    end = data.rfind(b"\n") + 1
    return data[:end], end != len(data)


def read_results_file(path: Path | str) -> ResultsFile:
    """Every row of a results.jsonl (none if the file does not exist yet); a torn last line is left out."""
    path = Path(path)
    if not present(path):
        return ResultsFile([], torn=False)
    data, torn = complete_lines(read_bytes_capped(path))
    numbered = [(number, line) for number, line in enumerate(data.split(b"\n"), start=1) if line.strip()]
    with collector_paused():
        rows = [_validate(ResultRow, line, path, number, DAMAGED_RESULTS) for number, line in numbered]
    return ResultsFile(rows, torn, [number for number, _ in numbered])


def read_results(path: Path | str) -> list[ResultRow]:
    """The rows of a results.jsonl, as read_results_file reads them."""
    return read_results_file(path).rows


def iter_results(path: Path | str) -> Iterator[tuple[int, ResultRow]]:
    """The rows of a results.jsonl one at a time with their byte offsets, as read_results_file reads them (a torn
    last line is left out: `results_torn` says whether there is one), holding one row at a time."""
    for offset, _, row in iter_numbered_results(path):
        yield offset, row


def iter_numbered_results(path: Path | str) -> Iterator[tuple[int, int, ResultRow]]:
    """`iter_results` with each row's line number (1-based, as errors name it) after its byte offset."""
    path = Path(path)
    if not present(path):
        return
    offset = 0
    with open_regular(path) as handle:
        for number, line in enumerate(iter_lines_capped(handle, path), start=1):
            if not line.endswith(b"\n"):
                return
            if line.strip():
                yield offset, number, _validate(ResultRow, line, path, number, DAMAGED_RESULTS)
            offset += len(line)


def result_row(line: bytes, path: Path) -> ResultRow:
    """A line of a results.jsonl that `iter_results` already read (found again at its offset), as its row."""
    return _validate(ResultRow, line, path, None, DAMAGED_RESULTS)


def results_torn(path: Path | str) -> bool:
    """Whether a results.jsonl ends in an unterminated line (a killed run's)."""
    path = Path(path)
    if not present(path):
        return False
    with open_regular(path) as data:
        if not data.seek(0, 2):
            return False
        data.seek(-1, 2)
        return data.read(1) != b"\n"


def find_run_info(run_dir: Path | str) -> RunInfo | None:
    """run.json of a run folder, or None if the folder holds none (yet)."""
    path = Path(run_dir) / RUN_FILE
    return _validate(RunInfo, read_bytes_capped(path, DOCUMENT_BYTES), path, None, DAMAGED_RUN) if present(path) \
        else None


def read_run_info(run_dir: Path | str) -> RunInfo:
    """run.json of a run folder, which must exist."""
    info = find_run_info(run_dir)
    if info is None:
        raise ContractError(Path(run_dir) / RUN_FILE, f"missing; is {run_dir} a run folder? (spec run writes one)")
    return info


def check_run_matches_suite(run_dir: Path | str, info: RunInfo, suite: SuiteHead) -> None:
    """Refuse a suite that is not its manifest's, or a run whose recorded suite hashes are not the suite's."""
    check_suite_integrity(suite)
    recorded = {MANIFEST_FILE: info.suite_manifest_sha256, SUITE_FILE: info.suite_sha256}
    found = {MANIFEST_FILE: suite.manifest_sha256, SUITE_FILE: suite.sha256}
    for name, sha in recorded.items():
        if sha is not None and sha != found[name]:
            raise ContractError(
                Path(run_dir) / RUN_FILE,
                f"the run was made on a suite whose {name} has sha256 {sha}, "
                f"but {suite.path / name} has sha256 {found[name]}",
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
    rows: list[SuiteRow] = []
    info, head = scan_run(run_dir, lambda offset, row: rows.append(row))
    return info, _with_rows(head, rows)


def scan_run(run_dir: Path | str, visit: Callable[[int, SuiteRow], None]) -> tuple[RunInfo, SuiteHead]:
    """A run folder's run.json and the suite it names, streamed through `visit` (as `scan_suite` does) and checked
    to be the suite the run was made on."""
    info = read_run_info(run_dir)
    suite = scan_suite(suite_dir_of(run_dir, info), visit)
    check_run_matches_suite(run_dir, info, suite)
    return info, suite
