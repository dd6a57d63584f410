"""A run folder belongs to one process and one model: a lock, safe folder names, no credentials written
down, and scoring that refuses results the run could not have written (issue 19, items 4, 5 and 8)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from spec_audits.base.secrets import scrub
from spec_audits.cli import main
from spec_audits.contract.reader import EDITED_SUITE
from spec_audits.contract.results_model import ResultRow
from spec_audits.contract.writer import file_sha256
from spec_audits.families.influence.score.synthetic import Design, write_run, write_suite
from spec_audits.runner.execute import run_suite
from spec_audits.runner.result_checks import read_checked_run
from spec_audits.runner.run_config import RunConfig
from spec_audits.runner.run_lock import locked
from spec_audits.runner.score_input import ScoreInputError
from spec_audits.runner.services.provider_errors import FatalError
from spec_audits.runner.study import slug
from tests.stub_server import StubConfig, StubServer
from tests.support import ROOT


@pytest.fixture
def stub() -> Iterator[StubServer]:
    server = StubServer(StubConfig())
    server.start()
    yield server
    server.stop()


def _spec(*args: str | Path) -> tuple[int, str]:
    result = CliRunner().invoke(main, [str(a) for a in args])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result.exit_code, result.output


def _run(suite: Path, out: Path, stub: StubServer, *models: str) -> tuple[int, str]:
    model_args = [arg for model in models or ("openai/stub",) for arg in ("--model", model)]
    return _spec("run", suite, "--out", out, *model_args, "--api-base", f"http://127.0.0.1:{stub.port}/v1",
                 "--no-progress")


def _busy(folder: Path, pid: int) -> str:
    return f"Error: {folder} is in use by another process (spec run, pid {pid}); wait for it to finish, or use " \
           "another --out\n"


def test_a_folder_in_use_is_refused_to_run_resume_and_merge(make_suite: Callable[..., Path], tmp_path: Path,
                                                            stub: StubServer) -> None:
    suite, out, other = make_suite(n=2, samples=1), tmp_path / "run", tmp_path / "other"
    assert _run(suite, other, stub)[0] == 0
    out.mkdir()
    torn = b'{"item_id": "x", "sam'  # a resume would rewrite this away: it must not, while the folder is held
    (out / "results.jsonl").write_bytes(torn)
    requests = stub.stats.requests
    with locked(out, "spec run"):
        assert _run(suite, out, stub) == (1, _busy(out, os.getpid()))
        assert _spec("merge", other, "--out", out) == (1, _busy(out, os.getpid()))
    with locked(other, "spec run"):  # a run still writing one of the runs to merge
        assert _spec("merge", other, "--out", tmp_path / "merged") == (1, _busy(other, os.getpid()))
    assert (out / "results.jsonl").read_bytes() == torn and stub.stats.requests == requests
    assert not (tmp_path / "merged").exists()


def test_a_second_process_is_refused_naming_the_holders_pid(make_suite: Callable[..., Path], tmp_path: Path,
                                                           stub: StubServer) -> None:
    suite, out = make_suite(n=2, samples=1), tmp_path / "run"
    command = [sys.executable, "-c", "from spec_audits.cli import main; main()", "run", str(suite),
               "--out", str(out), "--model", "openai/stub", "--api-base", f"http://127.0.0.1:{stub.port}/v1",
               "--no-progress"]
    with locked(out, "spec run"):
        child = subprocess.run(command, env={**os.environ, "PYTHONPATH": str(ROOT)}, capture_output=True, text=True,
                               timeout=300)
    assert (child.returncode, child.stderr) == (1, _busy(out, os.getpid()))
    assert stub.stats.requests == 0 and not (out / "run.json").exists()


@pytest.mark.parametrize("model", ["openai/..", "openai/.", "openai/", "openai/-..-"])
def test_a_model_name_never_leaves_the_study_folder(make_suite: Callable[..., Path], tmp_path: Path,
                                                   stub: StubServer, model: str) -> None:
    suite, study = make_suite(n=2, samples=1), tmp_path / "runs" / "study"
    assert _run(suite, study, stub, model, "openai/stub") == (0, _spec_lines(study, slug(model)))
    assert sorted(p.name for p in study.iterdir()) == sorted([slug(model), "stub", "study.json"])
    assert [p.name for p in (tmp_path / "runs").iterdir()] == ["study"]
    assert json.loads((study / slug(model) / "run.json").read_text())["model"] == model


def _spec_lines(study: Path, name: str) -> str:
    return "".join(f"{study / folder}: 2 answered, 0 failed of 2 (sample mode); 2 calls, 0 cache hits\n"
                   "  tokens: 20 prompt + 2 completion; no price known to litellm (calls answered from the response "
                   "cache cost nothing)\n" for folder in (name, "stub"))


def test_a_study_listing_a_path_is_refused(tmp_path: Path) -> None:
    (tmp_path / "study.json").write_text(json.dumps({"suite": "s", "runs": [".."]}), encoding="utf-8")
    assert _spec("score", tmp_path) == (1, f"Error: {tmp_path / 'study.json'}: 'runs' must be a list of run folder "
                                           "names inside the study (letters, digits, '.', '_', '-'; never a path, "
                                           "'..' or a hidden name)\n")


@pytest.mark.parametrize("credentials", ["user:s3cret@", "", "?token=s3cret", "#s3cret", ";token=s3cret"])
def test_an_api_base_with_credentials_is_a_clear_error(make_suite: Callable[..., Path], tmp_path: Path,
                                                       stub: StubServer, credentials: str) -> None:
    suite, out = make_suite(n=2, samples=1), tmp_path / "run"
    base = f"http://127.0.0.1:{stub.port}/v1"
    url = f"http://{credentials}127.0.0.1:{stub.port}/v1" if "@" in credentials else base + credentials
    code, output = _spec("run", suite, "--out", out, "--model", "openai/stub", "--api-base", url, "--no-progress")
    if not credentials:
        assert code == 0 and json.loads((out / "run.json").read_text())["settings"]["api_base"] == base
        return
    assert (code, output) == (1, f"Error: --api-base {base}: the URL carries a user name, password, path parameters, "
                                 "query or fragment, which the model client cannot send; give the bare base URL, and "
                                 "the server's key in the environment (OPENAI_API_KEY for openai/ models)\n")
    assert stub.stats.requests == 0 and not out.exists()


def test_recorded_settings_and_errors_carry_no_url_credentials(
    make_suite: Callable[..., Path], tmp_path: Path, stub: StubServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = RunConfig(suite_dir=tmp_path, out=tmp_path, api_base="https://u:s3cret@host:8/v1?key=s3cret#s3cret")
    assert config.settings()["api_base"] == "https://host:8/v1"
    assert scrub("POST https://u:s3cret@host/v1?key=s3cret failed") == "POST https://***@host/v1?*** failed"
    # a base URL with credentials from the environment (the judge's way to a server) stops the run, unretried
    monkeypatch.setenv("OPENAI_BASE_URL", f"http://u:s3cret@127.0.0.1:{stub.port}/v1")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-fake-key-for-the-test")
    with pytest.raises(FatalError, match="credentials encoded in URL") as caught:
        run_suite(RunConfig(suite_dir=make_suite(n=2, samples=1), out=tmp_path / "run", model="openai/stub",
                            max_retries=3, retry_base_s=0.01, progress=False))
    assert "s3cret" not in str(caught.value) and stub.stats.requests == 0


def test_answers_no_run_json_ties_to_the_model_are_never_adopted(make_suite: Callable[..., Path], tmp_path: Path,
                                                                stub: StubServer) -> None:
    suite, out = make_suite(n=2, samples=1), tmp_path / "run"
    assert _run(suite, out, stub, "openai/a")[0] == 0
    (out / "run.json").unlink()
    results = (out / "results.jsonl").read_bytes()
    assert _run(suite, out, stub, "openai/b") == (1, f"Error: {out} holds results.jsonl but no run.json, so nothing "
                                                     "says which suite and model its answers are of: restore "
                                                     "run.json, or use another --out\n")
    assert (out / "results.jsonl").read_bytes() == results and stub.stats.requests == 2


def test_a_resume_refuses_answers_of_another_model(make_suite: Callable[..., Path], tmp_path: Path,
                                                   stub: StubServer) -> None:
    suite, out = make_suite(n=2, samples=1), tmp_path / "run"
    assert _run(suite, out, stub, "openai/a")[0] == 0
    lines = (out / "results.jsonl").read_text().splitlines()
    stray = ResultRow.model_validate_json(lines[0]).model_copy(update={"model": "openai/b", "sample": 1})
    (out / "results.jsonl").write_text("\n".join([*lines, stray.model_dump_json()]) + "\n")
    assert _run(suite, out, stub, "openai/a") == (
        1, f"Error: {out / 'results.jsonl'}: holds an answer of 'openai/b' (item {stray.item_id}, sample 1), but this "
           "run is of 'openai/a'; a run folder holds one model's answers: use another --out\n")


@pytest.fixture
def scored_run(tmp_path: Path) -> Path:
    """A synthetic influence run of model m: 12 items x 4 samples, every answer as its outcome says."""
    rows = write_suite(tmp_path / "suite", Design())
    write_run(tmp_path / "run", tmp_path / "suite", rows, lambda factor, influence, condition: 0.5, model="m")
    return tmp_path / "run"


def _edit_result(run_dir: Path, line: int, **fields: object) -> dict[str, object]:
    lines = (run_dir / "results.jsonl").read_text().splitlines()
    row = json.loads(lines[line - 1])
    lines[line - 1] = json.dumps({**row, **fields})
    (run_dir / "results.jsonl").write_text("\n".join(lines) + "\n")
    return row


def test_scoring_refuses_results_of_another_model(scored_run: Path) -> None:
    _edit_result(scored_run, 5, model="other")
    assert _spec("score", scored_run) == (1, f"Error: {scored_run / 'results.jsonl'}, row 5, column 'model': "
                                             "answered by 'other', but run.json says the run is of 'm'\n")


def test_scoring_refuses_an_outcome_that_contradicts_its_answer(scored_run: Path) -> None:
    row = _edit_result(scored_run, 7)
    other = "old" if row["outcome"] == "young" else "young"
    _edit_result(scored_run, 7, outcome=other)
    path = scored_run / "results.jsonl"
    assert _spec("score", scored_run) == (1, f"Error: {path}, row 7, column 'outcome': outcome {other!r} contradicts "
                                             f"answer {row['answer']!r}, which means {row['outcome']!r}\n")
    _edit_result(scored_run, 7, answer="C", outcome=row["outcome"])
    assert _spec("score", scored_run) == (1, f"Error: {path}, row 7, column 'answer': answer 'C' is not one of the "
                                             "item's answers ('A', 'B')\n")
    _edit_result(scored_run, 7, answer=None)
    assert _spec("score", scored_run) == (1, f"Error: {path}, row 7, column 'outcome': outcome {row['outcome']!r} "
                                             "recorded without an answer\n")
    assert not (scored_run / "score").exists()


def test_every_family_reads_results_through_the_same_checks(make_suite: Callable[..., Path], tmp_path: Path,
                                                            stub: StubServer) -> None:
    suite, out = make_suite(n=2, samples=1), tmp_path / "run"
    assert _run(suite, out, stub)[0] == 0
    assert len(read_checked_run(out)[2]) == 2
    row = _edit_result(out, 2, outcome="neither")
    with pytest.raises(ScoreInputError) as caught:
        read_checked_run(out)
    assert str(caught.value.message) == (f"{out / 'results.jsonl'}, row 2, column 'outcome': outcome 'neither' "
                                         f"contradicts answer {row['answer']!r}, which means {row['outcome']!r}")


def test_scoring_refuses_a_suite_edited_after_the_run(scored_run: Path) -> None:
    suite = scored_run.parent / "suite"
    recorded = file_sha256(suite / "suite.jsonl")
    (suite / "suite.jsonl").write_text((suite / "suite.jsonl").read_text().replace("save", "spare"))
    assert _spec("score", scored_run) == (1, f"Error: {suite / 'suite.jsonl'}: sha256 is "
                                             f"{file_sha256(suite / 'suite.jsonl')}, but manifest.json records "
                                             f"{recorded}; {EDITED_SUITE}\n")
