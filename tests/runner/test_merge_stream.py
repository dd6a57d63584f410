"""`spec merge` reads its runs as streams and copies the lines it keeps: across runs, an answer beats a failure and
a later answer an earlier one, every (item, sample) once, sorted by item and sample; run.json counts them."""

from __future__ import annotations

from pathlib import Path

from spec_audits.contract.reader import RESULTS_FILE, read_results, read_run_info
from spec_audits.contract.results_model import ResultRow, RunInfo
from spec_audits.runner.merge import merge_runs
from spec_audits.runner.results_io import write_run_info


def _run(folder: Path, rows: list[ResultRow]) -> Path:
    folder.mkdir()
    write_run_info(folder, RunInfo(suite_dir="suite", suite_manifest_sha256="0" * 64, model="m", mode="sample",
                                   settings={}, started="2026-01-01T00:00:00+00:00", planned=len(rows), done=0,
                                   failed=0))
    (folder / RESULTS_FILE).write_bytes(b"".join(row.model_dump_json().encode() + b"\n" for row in rows))
    return folder


def _row(item: str, sample: int, answer: str | None) -> ResultRow:
    return ResultRow(item_id=item, sample=sample, model="m", params={}, answer=answer,
                     error=None if answer else "failed")


def test_merge_keeps_answers_over_failures_and_the_later_answer_sorted(tmp_path: Path) -> None:
    one = _run(tmp_path / "one", [_row("c", 1, "A"), _row("a", 0, None), _row("b", 0, "A"), _row("d", 0, None)])
    two = _run(tmp_path / "two", [_row("a", 0, "B"), _row("b", 0, None), _row("c", 1, "B"), _row("d", 0, None)])
    info = merge_runs([one, two], tmp_path / "merged")
    merged = [(r.item_id, r.sample, r.answer, r.error) for r in read_results(tmp_path / "merged" / RESULTS_FILE)]
    assert merged == [("a", 0, "B", None), ("b", 0, "A", None), ("c", 1, "B", None), ("d", 0, None, "failed")]
    assert (info.done, info.failed, info.planned) == (3, 1, 8) == \
        (read_run_info(tmp_path / "merged").done, read_run_info(tmp_path / "merged").failed, 8)
