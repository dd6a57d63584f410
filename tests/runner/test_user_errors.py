"""No traceback on a corrupt or hostile file, a full disk or a read-only folder (issue 19 item 7): exit
status 1, a message naming the file (and row), and no half-written file left under the real name."""

from __future__ import annotations

import json
import os
import resource
import shutil
import sqlite3
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from spec_audits.base.safe_files import fresh_opener
from spec_audits.cli import main
from spec_audits.runner import files_out
from spec_audits.runner.run_lock import LOCK_FILE
from tests.stub_server import StubServer
from tests.support import FIXTURES, ROOT

COUNTS = FIXTURES / "score" / "golden_counts.csv"
READ_ONLY = Path("/sys/kernel")  # sysfs: no process, root included, may create a file there
CACHE_ADVICE = "the response cache cannot be used ({}); run again with --no-cache, or move the file aside"


def _spec(*args: object, env: dict[str, str] | None = None) -> tuple[int, str]:
    """`spec ARGS` in-process: exit status and output; never an exception other than SystemExit."""
    result = CliRunner().invoke(main, [str(a) for a in args], env=env)
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result.exit_code, result.output


def _spec_limited(max_bytes: int, *args: object, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    """`spec ARGS` in a child whose files may not grow past `max_bytes` (RLIMIT_FSIZE, as `ulimit -f`)."""
    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (max_bytes, max_bytes))

    command = [sys.executable, "-c", "from spec_audits.cli import main; main()", *map(str, args)]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=300, preexec_fn=limit)


@pytest.fixture
def stub() -> Iterator[StubServer]:
    server = StubServer()
    server.start()
    yield server
    server.stop()


def _run(suite: Path, out: Path, stub: StubServer, *more: object) -> tuple[int, str]:
    return _spec("run", suite, "--model", "openai/stub", "--api-base", f"http://127.0.0.1:{stub.port}/v1",
                 "--out", out, "--no-progress", *more, env={"OPENAI_API_KEY": "sk-test"})


def _damage_pages(path: Path) -> None:
    """Overwrite a real cache's pages after the first two (its key index among them)."""
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE IF NOT EXISTS responses (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
    db.executemany("INSERT OR REPLACE INTO responses VALUES (?, ?)", [(str(i), "x" * 500) for i in range(3000)])
    db.commit()
    db.close()
    with path.open("r+b") as handle:
        handle.seek(8192)
        handle.write(b"\xff" * 40960)


def _not_a_response(path: Path) -> None:
    db = sqlite3.connect(path)
    db.execute("UPDATE responses SET value = '[1]'")
    db.commit()
    db.close()


@pytest.mark.parametrize(("damage", "problem"), [
    (lambda path, _: path.write_bytes(os.urandom(4096)), "file is not a database"),
    (lambda path, _: _damage_pages(path), "database disk image is malformed"),
    (lambda path, filled: _not_a_response(filled), "an entry is not a stored response: '[1]' is not an object with "
                                                   "text, top_logprobs, usage"),
], ids=["garbage", "damaged-pages", "not-a-response"])
def test_a_corrupt_response_cache_is_named_with_the_way_round_it(
        make_suite: Callable[..., Path], tmp_path: Path, stub: StubServer, response_cache: Path,
        damage: Callable[[Path, Path], None], problem: str) -> None:
    suite = make_suite(n=4, samples=1)
    assert _run(suite, tmp_path / "first", stub)[0] == 0  # fills the cache
    damage(response_cache, response_cache)
    status, output = _run(suite, tmp_path / "second", stub)
    assert status == 1 and f"Error: {response_cache}: {CACHE_ADVICE.format(problem)}" in output
    status, output = _run(suite, tmp_path / "third", stub, "--no-cache")
    assert status == 0 and "4 answered, 0 failed" in output


def test_generate_names_a_corrupt_cache_too(tmp_path: Path, response_cache: Path) -> None:
    response_cache.parent.mkdir(parents=True, exist_ok=True)
    response_cache.write_bytes(b"not a database at all" * 100)
    status, output = _spec("generate", ROOT / "specs" / "cognitive_bias.spec", "--model", "openai/stub",
                           "--limit", "1", "-o", tmp_path / "bank.csv")
    assert status == 1 and f"Error: {response_cache}: {CACHE_ADVICE.format('file is not a database')}" in output
    assert not (tmp_path / "bank.csv").exists()


def test_the_file_size_limit_stops_a_score_with_a_message_and_no_half_file(tmp_path: Path) -> None:
    done = _spec_limited(4096, "score", "--counts", COUNTS, "-o", tmp_path / "out", "--bootstrap", "20")
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert done.stderr == (f"Error: {tmp_path / 'out' / 'conditions.csv'}: File too large; the file would pass the "
                           "size limit this process may write (ulimit -f): raise it, or write somewhere else\n")
    assert list((tmp_path / "out").iterdir()) == []  # no partial file, and no summary.json for `spec report`


def test_the_file_size_limit_stops_a_compile_without_a_suite_folder(tmp_path: Path) -> None:
    done = _spec_limited(65536, "compile", "specs/triage.spec", "-o", tmp_path / "triage")
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert done.stderr.startswith(f"Error: {tmp_path / 'triage'}: File too large;")
    assert list(tmp_path.iterdir()) == []  # neither the suite nor its staging folder


def test_the_file_size_limit_leaves_no_half_merged_run(tmp_path: Path) -> None:
    from spec_audits.families.influence.score.synthetic import Design, write_run, write_suite

    rows = write_suite(tmp_path / "suite", Design())
    write_run(tmp_path / "run", tmp_path / "suite", rows, lambda f, i, c: 0.5)
    done = _spec_limited(4096, "merge", tmp_path / "run", "--out", tmp_path / "merged")
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert done.stderr.startswith(f"Error: {tmp_path / 'merged' / 'results.jsonl'}: File too large;")
    left = [p.name for p in (tmp_path / "merged").iterdir()]
    assert left in ([], [LOCK_FILE])  # a second merge into it is not refused as 'exists'; the lock file stays


@pytest.fixture
def score_folder(golden_scored: Path, tmp_path: Path) -> Path:
    """A copy of the golden counts' score folder (conftest's, made once per test process) for a test to damage."""
    return Path(shutil.copytree(golden_scored, tmp_path / "scored"))


def test_a_full_disk_leaves_the_report_unwritten(score_folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    if not Path("/dev/full").exists():
        pytest.skip("needs /dev/full, the device whose every write fails with ENOSPC")
    scored = score_folder

    def full_disk(path: str, flags: int) -> int:  # the disk fills as report.html is written
        made = fresh_opener(path, flags)  # the partial file is made, as on a real disk
        if not path.endswith("report.html.partial"):
            return made
        os.close(made)
        return os.open("/dev/full", os.O_WRONLY | os.O_CLOEXEC)  # and every write to it fails

    monkeypatch.setattr(files_out, "fresh_opener", full_disk)
    status, output = _spec("report", scored)
    assert status == 1
    assert output == f"Error: {scored / 'report.html'}: No space left on device; the disk is full: free some " \
                     "space, or write somewhere else\n"
    assert not (scored / "report.html").exists() and not (scored / "report.html.partial").exists()


def _read_only() -> Path:
    probe = READ_ONLY / "spec-probe"
    try:
        probe.touch()
    except OSError:
        return READ_ONLY
    probe.unlink()
    pytest.skip(f"{READ_ONLY} is writable here")


def test_a_read_only_folder_is_named(tmp_path: Path, make_suite: Callable[..., Path]) -> None:
    if not READ_ONLY.is_dir():
        pytest.skip(f"needs {READ_ONLY} (sysfs)")
    folder = _read_only()
    status, output = _spec("score", "--counts", COUNTS, "-o", folder, "--bootstrap", "20")
    assert status == 1 and output.startswith(f"Error: {folder / 'conditions.csv'}: ")
    assert output.endswith("this process may not write there: choose another output folder, or change its "
                           "permissions\n")
    status, output = _spec("run", make_suite(n=2, samples=1), "--out", folder / "run", "--model", "openai/x")
    assert status == 1 and output.startswith(f"Error: {folder / 'run'}: ")




@pytest.mark.parametrize(("file", "content", "message"), [
    ("summary.json", "[]", "{summary}: holds a JSON list, not an object; is it a `spec score` folder made by this "
                           "version? score the run again with `spec score`"),
    ("summary.json", '{"family": "influence_pairs"}', "{folder}: summary.json or a table beside it lacks the entry "
                                                      "'settings'"),
    ("summary.json", '{"family": ', "{summary}, row 1: invalid JSON: Expecting value"),
    ("summary.json", "\udcff", "{summary}: not UTF-8 text (invalid start byte at byte 0)"),
    ("conditions.csv", "\udcff\n", "{folder}: summary.json or a table beside it is not as `spec score` writes it "
                                   "('utf-8' codec can't decode byte 0xff in position 0: invalid start byte)"),
], ids=["list", "no-settings", "invalid-json", "not-utf8", "table-not-utf8"])
def test_a_damaged_score_folder_is_refused_by_report(score_folder: Path, file: str, content: str,
                                                     message: str) -> None:
    (score_folder / file).write_bytes(content.encode("utf-8", "surrogateescape"))
    status, output = _spec("report", score_folder)
    assert status == 1
    assert message.format(summary=score_folder / "summary.json", folder=score_folder) in output
    assert not (score_folder / "report.md").exists()


def test_a_column_only_a_plot_reads_is_a_located_error_when_the_report_draws_it(score_folder: Path) -> None:
    """The forests' interval columns are read when `spec report` draws the plots, after the report is built (a
    `spec score` headline never reads them): still a located error, and no report written."""
    import pandas as pd

    conditions = score_folder / "conditions.csv"
    pd.read_csv(conditions, keep_default_na=False).drop(columns="effect_A_lo").to_csv(conditions, index=False)
    status, output = _spec("report", score_folder)
    assert status == 1
    assert f"{score_folder}: summary.json or a table beside it lacks the entry 'effect_A_lo'" in output
    assert not (score_folder / "report.md").exists()


def test_a_huge_sample_number_is_a_located_error(tmp_path: Path) -> None:
    from spec_audits.families.influence.score.synthetic import Design, write_run, write_suite

    rows = write_suite(tmp_path / "suite", Design())
    write_run(tmp_path / "run", tmp_path / "suite", rows, lambda f, i, c: 0.5)
    results = tmp_path / "run" / "results.jsonl"
    lines = results.read_text().splitlines()
    lines[2] = json.dumps(json.loads(lines[2]) | {"sample": 10**30})
    results.write_text("\n".join(lines) + "\n")
    status, output = _spec("score", tmp_path / "run")
    assert status == 1
    assert f"Error: {results}:3: not a result row (ValueError('sample {10**30} is no sample index'))" in output


COUNTS_HEADER = "benchmark,model,factor,influence,group_A,group_B,c_0_A,c_0_B,c_A_A,c_A_B,c_B_A,c_B_B\n"


@pytest.mark.parametrize(("flag", "content", "message"), [
    ("--cells", "", "the file is empty: expected a header (target_bias, human_bias, n, mean_delta, std_delta)"),
    ("--counts", "", "cannot read the counts table (No columns to parse from file)"),
    ("--cells", "target_bias,human_bias,n,mean_delta,std_delta\nA,A,3,0.1,0.2\nA,B,3,abc,0.2\n",
     ", row 3, column 'mean_delta': 'abc' is not a number"),
    ("--cells", "target_bias,human_bias,n,mean_delta,std_delta\nA,A,3,0.1,inf\n",
     ", row 2, column 'std_delta': 'inf' is not a finite number"),
    ("--counts", "benchmark,model,factor,influence,group_A,group_B,c_0_A,c_0_B,c_A_A,c_A_B,c_B_A,c_B_B\n"
                 "t,m,f,i,a,b,1,2,3,4,5,six\n", ", row 1, column 'c_B_B': count 'six' is not a number"),
    ("--counts", f"{COUNTS_HEADER}t,m,f,i,a,b,1,2,3,4,5,6\nt,m,g,i,a,b,1,2,3,4,5,1e+308\n",
     ", row 2, column 'c_B_B': count '1e+308' is more than 1,000,000,000, the most trials one count may hold"),
    ("--counts", f"{COUNTS_HEADER}t,m,f,i,a,b,1,2,-3,4,5,6\n", ", row 1, column 'c_A_A': count '-3' is negative"),
    ("--counts", f"{COUNTS_HEADER}t,m,f,i,a,b,1,2.5,3,4,5,6\n",
     ", row 1, column 'c_0_B': count '2.5' is not an integer"),
], ids=["cells-empty", "counts-empty", "cells-text", "cells-infinite", "counts-text", "counts-huge", "counts-negative",
        "counts-fraction"])
def test_hostile_tables_are_located_errors(tmp_path: Path, flag: str, content: str, message: str) -> None:
    table = tmp_path / "table.csv"
    table.write_text(content, encoding="utf-8")
    status, output = _spec("score", flag, table, "-o", tmp_path / "out")
    assert status == 1 and output.startswith(f"Error: {table}") and message in output
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())
