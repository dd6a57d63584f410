"""Writing results.jsonl and run.json: an append-and-flush writer, resume state, an atomic run.json.

Reading them is spec_audits.contract.reader's job."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from spec_audits.contract.reader import RUN_FILE, ContractError, read_results_file
from spec_audits.contract.results_model import ResultRow, RunInfo
from spec_audits.runner.files_out import write_bytes, write_text
from spec_audits.safe_files import open_append
from spec_audits.secrets import scrub, scrub_text, scrubbed

Key = tuple[str, int]


def write_results(path: Path, rows: list[ResultRow]) -> None:
    """`rows` as the whole of results.jsonl, written whole or not at all."""
    write_bytes(path, b"".join(map(result_line, rows)))


def result_line(row: ResultRow) -> bytes:
    """A row as its line of results.jsonl, with no key in it: its error scrubbed as a provider's message, every
    other string (replies, which are scrubbed as they arrive) as text (spec_audits/secrets.py)."""
    if row.error is not None and scrub(row.error) != row.error:
        row = row.model_copy(update={"error": scrub(row.error)})
    text = row.model_dump_json()
    if scrub_text(text) != text:  # rare: a reply from an old cache, a URL's query, a key in a reply
        text = ResultRow.model_validate(scrubbed(row.model_dump(mode="json"))).model_dump_json()
    return text.encode() + b"\n"


def final_rows(rows: list[ResultRow]) -> dict[Key, ResultRow]:
    """One row per (item, sample): the last answer, which beats any failure."""
    kept: dict[Key, ResultRow] = {}
    for row in rows:
        key = (row.item_id, row.sample)
        if key not in kept or row.error is None or kept[key].error is not None:
            kept[key] = row
    return kept


@dataclass(frozen=True)
class ResumeState:
    """What an earlier, possibly killed, run of the same command already wrote."""

    rows: dict[Key, ResultRow]

    @property
    def done(self) -> set[Key]:
        return {key for key, row in self.rows.items() if row.error is None}

    @property
    def failed(self) -> set[Key]:
        return {key for key, row in self.rows.items() if row.error is not None}


def prepare_resume(path: Path, *, model: str, retry_failed: bool) -> ResumeState:
    """Repair the results file so appending is safe, and return what it holds.

    A torn last line (the process died mid-write) or any duplicate is removed by rewriting the file;
    with `retry_failed`, failed rows are removed too so that their retry is the only row for that pair.
    A row of another model than `model`, or any other bad line, is a ContractError: the file is left
    as it is."""
    found = read_results_file(path)
    other = next((row for row in found.rows if row.model != model), None)
    if other is not None:
        raise ContractError(path, f"holds an answer of {other.model!r} (item {other.item_id}, sample "
                            f"{other.sample}), but this run is of {model!r}",
                            fix="a run folder holds one model's answers: use another --out")
    kept = final_rows(found.rows)
    if retry_failed:
        kept = {key: row for key, row in kept.items() if row.error is None}
    if found.torn or len(kept) != len(found.rows):
        write_results(path, list(kept.values()))
    return ResumeState(kept)


class ResultsWriter:
    """Appends one row per answer; each row goes to the OS in one write, so a kill leaves at most
    one torn last line, which the next run drops."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self._path = path
        self._fd = open_append(path)

    def append(self, row: ResultRow) -> None:
        data = result_line(row)
        try:
            while data:
                data = data[os.write(self._fd, data) :]
        except OSError as err:  # a full disk: the message names the file (a torn last line is dropped on resume)
            raise OSError(err.errno, err.strerror, str(self._path)) from None

    def close(self) -> None:
        os.close(self._fd)


def write_run_info(run_dir: Path, info: RunInfo) -> None:
    """Write run.json atomically, with no key in it (its settings and notes scrubbed as text)."""
    clean = RunInfo.model_validate(scrubbed(info.model_dump(mode="json")))
    write_text(run_dir / RUN_FILE, clean.model_dump_json(indent=2) + "\n")
