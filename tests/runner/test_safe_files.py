"""Files in a folder a stranger may have written are opened without following links, only if regular, and
read within caps (spec_audits/base/safe_files.py): a lock linked to another file, a FIFO, a key list linked to
/dev/zero, a 400 MB line, a results.jsonl that is a folder and a study whose runs are links elsewhere are each
an error naming the file. Every hostile file is made here, in tmp_path."""

from __future__ import annotations

import os
import threading
import tracemalloc
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from spec_audits.base.safe_files import (
    DOCUMENT_BYTES,
    MAX_LINE_BYTES,
    UnsafeFile,
    iter_lines_capped,
    open_regular,
    present,
    read_bytes_capped,
)
from spec_audits.contract.reader import ContractError, find_run_info, read_results_file
from spec_audits.runner.batch.ledger import Part, read_keys, read_ledger, write_atomic
from spec_audits.runner.dispatch.score_cli import score
from spec_audits.runner.files_out import write_text
from spec_audits.runner.imported import json_lines
from spec_audits.runner.report.document import Document, Image
from spec_audits.runner.report.html import render_html
from spec_audits.runner.results_io import ResultsWriter
from spec_audits.runner.run_lock import LOCK_FILE, locked, reading
from spec_audits.runner.study import STUDY_FILE, expand_runs
from spec_audits.runner.unread import has_scorable
from tests.runner.batch.support import run
from tests.stub_server import StubConfig, StubServer
from tests.support import shipped_suite

LINKED = "is a symbolic link; spec does not follow links in the folders it reads: put the file itself there"


def test_a_lock_that_is_a_link_is_refused_and_its_target_untouched(tmp_path: Path) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n")
    out = tmp_path / "run"
    out.mkdir()
    (out / LOCK_FILE).symlink_to(victim)
    with pytest.raises(UnsafeFile, match=rf"^{out / LOCK_FILE}: {LINKED}$"), locked(out, "spec run"):
        pass
    with pytest.raises(UnsafeFile, match=rf"^{out / LOCK_FILE}: {LINKED}$"), reading(out):
        pass
    assert victim.read_text() == "precious\n"


def test_a_lock_with_a_second_name_is_refused_and_the_other_name_untouched(tmp_path: Path) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n")
    out = tmp_path / "run"
    out.mkdir()
    os.link(victim, out / LOCK_FILE)
    with pytest.raises(UnsafeFile, match=rf"^{out / LOCK_FILE}: has another name \(a hard link\)"), \
            locked(out, "spec run"):
        pass
    assert victim.read_text() == "precious\n"


def test_a_fifo_lock_is_an_error_naming_it(tmp_path: Path) -> None:
    out = tmp_path / "run"
    out.mkdir()
    os.mkfifo(out / LOCK_FILE)
    with pytest.raises(UnsafeFile, match=rf"^{out / LOCK_FILE}: is a FIFO, not a regular file$"), \
            locked(out, "spec run"):
        pass


def test_a_fifo_is_refused_without_waiting_for_a_writer(tmp_path: Path) -> None:
    fifo = tmp_path / "results.jsonl"
    os.mkfifo(fifo)
    outcome: list[BaseException] = []

    def read() -> None:
        try:
            read_results_file(fifo)
        except UnsafeFile as err:
            outcome.append(err)

    reader = threading.Thread(target=read, daemon=True)  # a blocked open would hang here, not the test run
    reader.start()
    reader.join(timeout=120)
    assert [str(err) for err in outcome] == [f"{fifo}: is a FIFO, not a regular file"]


def test_a_key_list_linked_to_dev_zero_is_refused_unread(tmp_path: Path) -> None:
    batches = tmp_path / "run" / "batches"
    batches.mkdir(parents=True)
    part = Part(name="r001-p0001", model="openai/stub", round=1, requests=1, bytes=10)
    (batches / "r001-p0001.keys").symlink_to("/dev/zero")
    with pytest.raises(UnsafeFile, match=rf"^{batches / 'r001-p0001.keys'}: {LINKED}$"):
        read_keys(tmp_path / "run", part)


def test_a_device_and_an_oversized_file_are_refused_at_the_cap(tmp_path: Path) -> None:
    with pytest.raises(UnsafeFile, match=r"^/dev/zero: is a character device, not a regular file$"):
        read_bytes_capped("/dev/zero")
    ledger = tmp_path / "run" / "batches" / "ledger.json"
    ledger.parent.mkdir(parents=True)
    with ledger.open("wb") as handle:  # sparse: no disk used
        handle.truncate(DOCUMENT_BYTES + 1)
    with pytest.raises(UnsafeFile, match=rf"^{ledger}: is over {DOCUMENT_BYTES:,} bytes, the most spec reads "
                                         r"from such a file$"):
        read_ledger(tmp_path / "run")


def test_a_400_mb_line_is_refused_at_the_cap_in_bounded_memory(tmp_path: Path) -> None:
    transcript = tmp_path / "transcript.jsonl"
    with transcript.open("wb") as handle:
        handle.write(b'{"a": 1}\n')
        handle.truncate(400 * 1024**2)  # one 400 MB line of NUL bytes after the first (sparse: no disk used)
    tracemalloc.start()
    try:
        with pytest.raises(UnsafeFile, match=rf"^{transcript}: line 2 is over {MAX_LINE_BYTES:,} bytes, the most "
                                             r"spec reads as one line$"):
            list(json_lines(transcript))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 2 * MAX_LINE_BYTES + 16 * 1024**2


def test_lines_within_the_cap_are_read_whole(tmp_path: Path) -> None:
    path = tmp_path / "rows.jsonl"
    path.write_bytes(b"one\n" + b"x" * 99 + b"\nlast")
    with open_regular(path) as handle:
        assert list(iter_lines_capped(handle, path, max_line_bytes=100)) == [b"one\n", b"x" * 99 + b"\n", b"last"]
    with open_regular(path) as handle, pytest.raises(UnsafeFile, match=r": line 2 is over 99 bytes"):
        list(iter_lines_capped(handle, path, max_line_bytes=99))


def test_run_json_linked_elsewhere_is_refused_not_read(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere.json"
    elsewhere.write_text("{}")
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "run.json").symlink_to(elsewhere)
    with pytest.raises(UnsafeFile, match=rf"^{tmp_path / 'run' / 'run.json'}: {LINKED}$"):
        find_run_info(tmp_path / "run")


def test_a_results_file_that_is_a_folder_is_an_error_naming_it(tmp_path: Path) -> None:
    out = tmp_path / "run"
    stub = StubServer(StubConfig())
    stub.start()
    try:
        run(shipped_suite("triage"), out, stub, batch=False, limit=8, cache_path=tmp_path / "cache.sqlite")
    finally:
        stub.stop()
    (out / "results.jsonl").unlink()
    (out / "results.jsonl").mkdir()
    result = CliRunner().invoke(score, [str(out), "-o", str(tmp_path / "scored")])
    assert (result.exit_code, type(result.exception)) == (1, SystemExit)
    assert f"{out / 'results.jsonl'}: is a folder, not a regular file" in result.output
    assert "no answered item" not in result.output


def test_the_scorable_check_never_follows_a_results_link(tmp_path: Path) -> None:
    """`spec score`'s first look at a run (is anything scorable?) opens results.jsonl as the reader does."""
    elsewhere = tmp_path / "private.jsonl"
    elsewhere.write_text('{"answer": "A", "error": null}\n', encoding="utf-8")
    (tmp_path / "results.jsonl").symlink_to(elsewhere)
    with pytest.raises(UnsafeFile) as refused:
        has_scorable(tmp_path / "results.jsonl")
    assert str(refused.value).startswith(f"{tmp_path / 'results.jsonl'}: is a symbolic link; spec does not follow")
    assert has_scorable(elsewhere) and not has_scorable(tmp_path / "absent.jsonl")


def test_a_study_whose_runs_are_links_elsewhere_is_refused(tmp_path: Path) -> None:
    elsewhere = tmp_path / "someone-elses-run"
    elsewhere.mkdir()
    study = tmp_path / "study"
    study.mkdir()
    (study / STUDY_FILE).write_text('{"suite": "x", "runs": ["a"]}')
    (study / "a").symlink_to(elsewhere)
    with pytest.raises(ContractError, match=rf"^{study / 'a'}: is a symbolic link; a study's runs are folders "
                                            r"inside it, never links to runs elsewhere"):
        expand_runs((study,))


@pytest.mark.parametrize("writer", [write_text, lambda path, text: write_atomic(path, text.encode())])
def test_a_link_planted_at_a_partial_name_is_dropped_never_written_through(tmp_path: Path, writer: Any) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n")
    out = tmp_path / "run"
    out.mkdir()
    (out / "run.json.partial").symlink_to(victim)
    writer(out / "run.json", '{"ours": true}\n')
    assert victim.read_text() == "precious\n"
    assert (out / "run.json").read_text() == '{"ours": true}\n' and not (out / "run.json").is_symlink()
    assert not present(out / "run.json.partial")


def test_results_appended_through_a_link_are_refused(tmp_path: Path) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n")
    (tmp_path / "results.jsonl").symlink_to(victim)
    with pytest.raises(UnsafeFile, match=rf"^{tmp_path / 'results.jsonl'}: {LINKED}$"):
        ResultsWriter(tmp_path / "results.jsonl")
    assert victim.read_text() == "precious\n"


def test_a_plot_linked_to_a_private_file_is_never_embedded_in_a_report(tmp_path: Path) -> None:
    secret = tmp_path / "id_rsa"
    secret.write_text("PRIVATE KEY\n")
    plot = tmp_path / "scored" / "forest.png"
    plot.parent.mkdir()
    plot.symlink_to(secret)
    with pytest.raises(UnsafeFile, match=rf"^{plot}: {LINKED}$"):
        render_html(Document("report", [Image(plot, "a plot")]))
