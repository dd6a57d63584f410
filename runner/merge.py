"""Merge the results of shard runs of one suite into one run folder, with no duplicates, reading each file as a
stream (a few numbers and the item id per row) and copying the kept lines."""

from __future__ import annotations

import contextlib
from array import array
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import numpy as np

from spec_audits.base.safe_files import open_regular
from spec_audits.contract.reader import RESULTS_FILE, RUN_FILE, iter_results, read_run_info, result_row
from spec_audits.contract.results_model import RunInfo
from spec_audits.contract.unique_ids import id_hash
from spec_audits.runner.files_out import replacing
from spec_audits.runner.results_io import Written, result_line, write_run_info
from spec_audits.runner.run_lock import locked, reading
from spec_audits.runner.suite_index import item_keys


class MergeError(ValueError):
    """Runs that cannot be merged (different suites, models or modes)."""


def _infos(run_dirs: list[Path]) -> list[RunInfo]:
    """Every run's run.json (a ContractError if one is missing or bad); they must share suite, model and mode."""
    infos = [read_run_info(run_dir) for run_dir in run_dirs]
    first = infos[0]
    for run_dir, info in zip(run_dirs, infos, strict=True):
        if (info.suite_manifest_sha256, info.model, info.mode) != (
            first.suite_manifest_sha256,
            first.model,
            first.mode,
        ):
            raise MergeError(f"{run_dir}: a run of {_what(info)} cannot merge with {run_dirs[0]}: {_what(first)}")
    return infos


def _what(info: RunInfo) -> str:
    return f"{info.suite_dir} (manifest sha256 {info.suite_manifest_sha256}) with {info.model} ({info.mode})"


def merge_runs(run_dirs: list[Path], out: Path) -> RunInfo:
    """Write OUT/results.jsonl (one row per (item, sample), answers beating failures, sorted) and run.json,
    holding OUT and keeping runs out of the merged folders meanwhile (RunError if one is running)."""
    if not run_dirs:
        raise MergeError("nothing to merge")
    with contextlib.ExitStack() as held:
        for run_dir in {d.resolve(): d for d in run_dirs if d.resolve() != out.resolve()}.values():
            held.enter_context(reading(run_dir))
        infos = _infos(run_dirs)  # before OUT is made: runs that cannot merge leave nothing behind
        held.enter_context(locked(out, "spec merge"))
        return _merge(run_dirs, infos, out)


def _merge(run_dirs: list[Path], infos: list[RunInfo], out: Path) -> RunInfo:
    found = _Found.read(run_dirs, infos)
    target = out / RESULTS_FILE
    if target.exists():
        raise MergeError(f"{target} exists; merge into an empty folder")
    kept = found.final()
    with replacing(target, "wb") as merged, contextlib.ExitStack() as files:  # a full disk leaves no half file
        sources = [files.enter_context(open_regular(run_dir / RESULTS_FILE)) for run_dir in run_dirs]
        for at in kept:
            source = sources[found.files[at]]
            source.seek(found.written.offsets[at])
            merged.write(result_line(result_row(source.readline(), run_dirs[found.files[at]] / RESULTS_FILE)))
    done = int(np.count_nonzero(~found.written.errors[kept]))
    first = infos[0]
    info = RunInfo(
        suite_dir=first.suite_dir,
        suite_manifest_sha256=first.suite_manifest_sha256,
        suite_sha256=first.suite_sha256,
        model=first.model,
        mode=first.mode,
        settings={**first.settings, "shard": None, "merged_from": [str(d) for d in run_dirs]},
        started=min(i.started for i in infos),
        ended=datetime.now(UTC).isoformat(timespec="seconds"),
        planned=sum(i.planned for i in infos),
        done=done,
        failed=len(kept) - done,
    )
    write_run_info(out, info)
    return info


@dataclass(frozen=True)
class _Found:
    """Every row of the runs' results.jsonl files, a few numbers each (`Written`), with its file and its (item id,
    sample) to sort by; the rows themselves stay in the files until they are copied."""

    written: Written
    files: np.ndarray
    ids: list[str]
    samples: np.ndarray

    @classmethod
    def read(cls, run_dirs: list[Path], infos: list[RunInfo]) -> _Found:
        ids: list[str] = []
        samples, errors, offsets, files = array("q"), array("b"), array("q"), array("q")
        for number, (run_dir, info) in enumerate(zip(run_dirs, infos, strict=True)):
            for offset, row in iter_results(run_dir / RESULTS_FILE):
                if row.model != info.model:
                    raise MergeError(f"{run_dir / RESULTS_FILE}: holds an answer of {row.model} (item "
                                     f"{row.item_id}), but {RUN_FILE} says the run is of {info.model}")
                ids.append(row.item_id)
                samples.append(row.sample)
                errors.append(row.error is not None)
                offsets.append(offset)
                files.append(number)
        sample = np.frombuffer(samples, dtype=np.int64)
        keys = item_keys(np.array([id_hash(item) for item in ids], dtype=np.uint64), sample)
        written = Written(keys, np.frombuffer(errors, dtype=np.int8).astype(bool),
                          np.frombuffer(offsets, dtype=np.int64), torn=False)
        return cls(written, np.frombuffer(files, dtype=np.int64), ids, sample)

    def final(self) -> list[int]:
        """The rows `final_positions` keeps (one per (item, sample): the last answer, else the last failure, over the
        runs in the order given), sorted by (item id, sample)."""
        return sorted(self.written.final().tolist(), key=lambda at: (self.ids[at], int(self.samples[at])))
