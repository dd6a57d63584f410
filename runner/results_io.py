"""Writing results.jsonl and run.json: an append-and-flush writer, resume state, an atomic run.json.

Reading them is spec_audits.contract.reader's job."""

from __future__ import annotations

import os
from array import array
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from spec_audits.base.safe_files import open_append
from spec_audits.base.secrets import scrub, scrub_text, scrubbed
from spec_audits.contract.reader import (
    RUN_FILE,
    ContractError,
    iter_results,
    read_lines_at,
    result_row,
    results_torn,
)
from spec_audits.contract.results_model import ResultRow, RunInfo
from spec_audits.contract.unique_ids import id_hash
from spec_audits.runner.files_out import replacing, write_bytes, write_text
from spec_audits.runner.suite_index import item_keys
from spec_audits.runner.unread import Unread, unread


def write_results(path: Path, rows: list[ResultRow]) -> None:
    """`rows` as the whole of results.jsonl, written whole or not at all."""
    write_bytes(path, b"".join(map(result_line, rows)))


def result_line(row: ResultRow) -> bytes:
    """A row as its line of results.jsonl, with no key in it: its error scrubbed as a provider's message, every
    other string (replies, which are scrubbed as they arrive) as text (spec_audits/base/secrets.py)."""
    if row.error is not None and scrub(row.error) != row.error:
        row = row.model_copy(update={"error": scrub(row.error)})
    text = row.model_dump_json()
    if scrub_text(text) != text:  # rare: a reply from an old cache, a URL's query, a key in a reply
        text = ResultRow.model_validate(scrubbed(row.model_dump(mode="json"))).model_dump_json()
    return text.encode() + b"\n"


@dataclass(frozen=True)
class Written:
    """What a results.jsonl holds, a few numbers per row: each row's (item, sample) key (`suite_index.item_key`),
    whether it failed, and its byte offset; and whether a torn last line was left out."""

    keys: np.ndarray
    errors: np.ndarray
    offsets: np.ndarray
    torn: bool

    @classmethod
    def read(cls, path: Path, model: str | None = None) -> Written:
        """The rows of `path` in one stream; a row of another model than `model` (if given) is a ContractError."""
        ids, samples, errors, offsets = array("Q"), array("q"), array("b"), array("q")
        for offset, row in iter_results(path):
            if model is not None and row.model != model:
                raise ContractError(path, f"holds an answer of {row.model!r} (item {row.item_id}, sample "
                                    f"{row.sample}), but this run is of {model!r}",
                                    fix="a run folder holds one model's answers: use another --out")
            ids.append(id_hash(row.item_id))
            samples.append(row.sample)
            errors.append(row.error is not None)
            offsets.append(offset)
        keys = item_keys(np.frombuffer(ids, dtype=np.uint64), np.frombuffer(samples, dtype=np.int64))
        return cls(keys, np.frombuffer(errors, dtype=np.int8).astype(bool), np.frombuffer(offsets, dtype=np.int64),
                   results_torn(path))

    def final(self) -> np.ndarray:
        """The positions of the rows a resume or merge keeps (one per key: the last answer, else the last failure),
        in the order of each key's first row (`final_positions`)."""
        return final_positions(self.keys, self.errors)


def final_positions(keys: np.ndarray, errors: np.ndarray) -> np.ndarray:
    """Of rows with these (item, sample) `keys` and failure flags, the positions of those a resume or merge keeps (one
    per key: the last answer, else the last failure), in the order of each key's first row, without a Python object
    per row. Scoring keeps none of this: it refuses a repeat (runner/score_input.refuse_repeats)."""
    n = len(keys)
    if not n:
        return np.zeros(0, dtype=np.int64)
    _, first, inverse = np.unique(keys, return_index=True, return_inverse=True)
    score = np.arange(n, dtype=np.int64) + np.where(errors, 0, n)  # an answer beats a failure; later wins
    best = np.full(len(first), -1, dtype=np.int64)
    np.maximum.at(best, inverse.ravel(), score)
    return (best - np.where(best >= n, n, 0))[np.argsort(first)]


@dataclass(frozen=True)
class ResumeState:
    """What an earlier, possibly killed, run of the same command already wrote: the sorted keys of its (item,
    sample) pairs (`suite_index.item_key`)."""

    keys: np.ndarray


def prepare_resume(path: Path, *, model: str, retry_failed: bool) -> ResumeState:
    """Repair the results file so appending is safe, and return what it holds.

    A torn last line (the process died mid-write) or any duplicate is removed by rewriting the file;
    with `retry_failed`, failed rows are removed too so that their retry is the only row for that pair.
    A row of another model than `model`, or any other bad line, is a ContractError: the file is left
    as it is. The file is read as a stream: a few numbers per row are held, never the rows."""
    found = Written.read(path, model)
    kept = found.final()
    if retry_failed:
        kept = kept[~found.errors[kept]]
    if found.torn or len(kept) != len(found.keys):
        with replacing(path, "wb") as out:  # each kept row written again as a run writes it (scrubbed)
            for _, line in read_lines_at(path, found.offsets[kept].tolist()):
                out.write(result_line(result_row(line, path)))
    return ResumeState(np.sort(found.keys[kept]))


@dataclass(frozen=True)
class Counts:
    """Of a run's planned items, what results.jsonl holds: answered, failed, the successful replies that gave no
    valid answer, and tokens (prompt_tokens, completion_tokens, and fresh_... of calls not from the cache)."""

    done: int
    failed: int
    unread: Unread
    tokens: Counter[str]


def final_counts(path: Path, planned: np.ndarray) -> Counts:
    """`Counts` of the (item, sample) keys `planned` (sorted), read as two streams: one for the keys, one for the
    rows kept."""
    found = Written.read(path)
    kept = found.final()
    ours = kept[np.isin(found.keys[kept], planned)]
    done = int(np.count_nonzero(~found.errors[ours]))
    chosen = np.zeros(len(found.keys), dtype=bool)
    chosen[ours] = True
    tokens: Counter[str] = Counter()

    def rows() -> Iterator[ResultRow]:
        for at, (_, row) in enumerate(iter_results(path)):
            if chosen[at]:
                for kind in ("prompt_tokens", "completion_tokens"):
                    spent = (row.usage or {}).get(kind, 0)
                    tokens[kind] += spent
                    tokens[f"fresh_{kind}"] += 0 if row.cached else spent
                yield row

    return Counts(done, len(ours) - done, unread(rows()), tokens)


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
