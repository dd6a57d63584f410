"""Merge the results of shard runs of one suite into one run folder, with no duplicates."""

from __future__ import annotations

import contextlib
from datetime import UTC, datetime
from pathlib import Path

from spec_audits.contract.reader import RESULTS_FILE, RUN_FILE, read_results, read_run_info
from spec_audits.contract.results_model import ResultRow, RunInfo
from spec_audits.runner.results_io import final_rows, write_results, write_run_info
from spec_audits.runner.run_lock import locked, reading


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
    rows: list[ResultRow] = []
    for run_dir, info in zip(run_dirs, infos, strict=True):
        found = read_results(run_dir / RESULTS_FILE)
        other = next((row for row in found if row.model != info.model), None)
        if other is not None:
            raise MergeError(f"{run_dir / RESULTS_FILE}: holds an answer of {other.model} (item {other.item_id}), "
                             f"but {RUN_FILE} says the run is of {info.model}")
        rows += found
    merged = final_rows(rows)
    target = out / RESULTS_FILE
    if target.exists():
        raise MergeError(f"{target} exists; merge into an empty folder")
    write_results(target, [merged[key] for key in sorted(merged)])  # a full disk leaves no half-merged file
    done = sum(row.error is None for row in merged.values())
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
        failed=len(merged) - done,
    )
    write_run_info(out, info)
    return info
