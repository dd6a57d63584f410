"""Stage 5: stream rows to disk, sort them by id, hash everything, and publish the folder atomically.

The files' formats, ids and hashes are the suite contract's (spec_audits/contract/writer.py); this stage
writes a suite of any size through them in bounded memory and proves its balance."""

from __future__ import annotations

import hashlib
import os
import shutil
from collections import defaultdict
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from spec_audits.base.records import Record, field
from spec_audits.contract.seeding import canonical_json
from spec_audits.contract.writer import ID_BYTES, ID_HEX

if TYPE_CHECKING:  # the row models: only a compile builds them, never `spec check`
    from spec_audits.contract.suite_model import Balance

_ID_START = len('{"id":"')
_ID_END = _ID_START + ID_HEX


class Tally(Record, frozen=False):
    """Counts gathered while rows stream past: totals, distinct values per axis, trials per cell."""

    rows: int = 0
    trials: int = 0
    axes: dict[str, set[Any]] = field(default_factory=lambda: defaultdict(set))
    cell_trials: dict[tuple[Any, ...], int] = field(default_factory=lambda: defaultdict(int))

    def add(self, row: dict[str, Any], balance_keys: tuple[str, ...]) -> None:
        self.rows += 1
        self.trials += row["samples"]
        cell = row["cell"]
        for key, value in cell.items():
            self.axes[key].add(value)
        self.cell_trials[tuple(map(cell.get, balance_keys))] += row["samples"]


class UnbalancedError(Exception):
    """The rows written do not give every cell the same number of trials."""


class DuplicateRowError(Exception):
    """Two rows serialised to the same content: the design repeats a stimulus."""


BUCKETS = 64  # scratch files the rows are spread over by their id's leading bits (few enough for any fd limit)


def write_rows(rows: Iterable[dict[str, Any]], folder: Path, tally: Tally, balance_keys: tuple[str, ...]) -> str:
    """Write suite.jsonl sorted by id and return its sha256.

    Ids are uniform hashes, so each row goes to one of BUCKETS scratch files by the id's leading six bits
    and each file is then sorted in memory: time stays linear in the rows, and memory holds one bucket
    (a 64th of the suite), not a key per row."""
    scratch = folder / "buckets"
    scratch.mkdir()
    paths = [scratch / f"{index:02d}" for index in range(BUCKETS)]
    handles = [path.open("wb", buffering=1 << 16) for path in paths]
    try:
        for row in rows:
            body = canonical_json(row).encode()
            digest = hashlib.sha256(body).digest()
            handles[digest[0] * BUCKETS >> 8].write(b'{"id":"%s",%s\n' % (digest[:ID_BYTES].hex().encode(), body[1:]))
            tally.add(row, balance_keys)
    finally:
        for handle in handles:
            handle.close()
    suite_sha256 = _sort_buckets(paths, folder / "suite.jsonl")
    scratch.rmdir()
    return suite_sha256


def _sort_buckets(paths: list[Path], target: Path) -> str:
    """Append every bucket, sorted, to `target` (each line starts with its id, so line order is id order)."""
    digest = hashlib.sha256()
    with target.open("wb") as out:
        for path in paths:
            lines = path.read_bytes().split(b"\n")[:-1]
            path.unlink()
            lines.sort()
            for before, after in zip(lines, lines[1:], strict=False):
                if before[:_ID_END] == after[:_ID_END]:
                    raise DuplicateRowError(before[_ID_START:_ID_END].decode())
            block = b"\n".join(lines) + b"\n" if lines else b""
            digest.update(block)
            out.write(block)
    return digest.hexdigest()


def balance_report(tally: Tally, keys: tuple[str, ...], shared: dict[str, str],
                   expand_shared: dict[str, list[Any]]) -> list[Balance]:
    """Trials per (keys) cell, counting shared rows (e.g. the baseline) once for every value they serve:
    every value listed in `expand_shared`, or, for a key it does not list, the values the design's other
    rows carry in the same cell (e.g. the human biases of one unit)."""
    from spec_audits.contract.suite_model import Balance

    per_cell: dict[tuple[Any, ...], int] = defaultdict(int)
    found = _served_in_cells(tally, keys, shared)
    for cell, trials in tally.cell_trials.items():
        values = dict(zip(keys, cell, strict=True))
        served_key = shared.get(str(values.get("condition")))
        if served_key is not None and values.get(served_key) is None:
            serves = expand_shared.get(served_key) or sorted(found[_around(values, served_key)], key=str)
            for served in serves:
                per_cell[tuple({**values, served_key: served}[k] for k in keys)] += trials
        else:
            per_cell[cell] += trials
    counts = sorted(set(per_cell.values()))
    if len(counts) != 1:
        raise UnbalancedError(f"cells over ({', '.join(keys)}) get between {counts[0]} and {counts[-1]} trials")
    return [Balance(keys=list(keys), cells=len(per_cell), trials_per_cell=counts[0], shared=shared)]


def _around(values: dict[str, Any], served_key: str) -> tuple[Any, ...]:
    """A cell's coordinates without its condition and the key a shared row serves."""
    return tuple(v for k, v in values.items() if k not in ("condition", served_key))


def _served_in_cells(tally: Tally, keys: tuple[str, ...], shared: dict[str, str]) -> dict[tuple[Any, ...], set[Any]]:
    found: dict[tuple[Any, ...], set[Any]] = defaultdict(set)
    served_keys = set(shared.values())
    for cell in tally.cell_trials:
        values = dict(zip(keys, cell, strict=True))
        for served_key in served_keys:
            if values.get(served_key) is not None:
                found[_around(values, served_key)].add(values[served_key])
    return found


def publish(staging: Path, out_dir: Path) -> None:
    """Replace out_dir by the finished staging folder, never leaving a half-written folder behind."""
    if out_dir.exists():
        retired = out_dir.with_name(f".{out_dir.name}.old-{os.getpid()}")
        out_dir.rename(retired)
        staging.rename(out_dir)
        shutil.rmtree(retired)
    else:
        staging.rename(out_dir)


