"""Exports that run as they are, and their results back: `inspect eval` runs the exported task file unchanged and
the promptfoo CLI the exported config, both against a loopback stub (no network); `spec import` brings the
inspect log and the promptfoo results back as runs that score to the same statistics as a native `spec run`
on the same answers. An echo of the prompt fails the promptfoo assertion."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from spec_audits.cli import main
from spec_audits.contract.reader import read_results, read_suite
from spec_audits.runner.commands.publish.export import to_inspect
from spec_audits.runner.execute import run_suite
from spec_audits.runner.run_config import RunConfig
from tests.runner.publish.project import make_project
from tests.stub_server import StubServer, _completion

BIN = Path(sys.executable).parent


class ByPrompt(StubServer):
    """Answers X or Y by a hash of the chat's texts alone, so every tool that sends the same chat gets the same
    answer, whatever else its request holds; a few chats get an answer no parser reads."""

    def completion(self, body: dict) -> dict:
        text = "\n".join(str(m.get("content")) for m in body["messages"])
        digest = hashlib.sha256(text.encode()).digest()[0]
        return _completion(body, "I cannot say." if digest < 40 else "X" if digest % 2 else "Y")


def _spec(*args: str) -> str:
    result = CliRunner().invoke(main, list(args))
    assert result.exception is None and result.exit_code == 0, result.output
    return result.output


@pytest.fixture
def suite(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return make_project(tmp_path)


def _native(suite: Path, api_base: str) -> Path:
    run_suite(RunConfig(suite_dir=suite, out=Path("native"), model="openai/stub", api_base=api_base, use_cache=False,
                        progress=False))
    return Path("native")


def _answers(run: Path) -> dict[tuple[str, int], Any]:
    return {(r.item_id, r.sample): (r.answer, r.outcome, r.response) for r in read_results(run / "results.jsonl")}


def _scores(run: Path) -> dict[str, str]:
    _spec("score", str(run))
    return {path.name: path.read_text(encoding="utf-8") for path in sorted((run / "score").glob("*.csv"))}


@pytest.mark.slow
def test_inspect_eval_runs_the_export_unchanged_and_its_log_scores_as_a_native_run(suite: Path) -> None:
    to_inspect(read_suite(suite), Path("exp/tiny.jsonl")) if Path("exp").mkdir() is None else None
    server = ByPrompt()
    api_base = server.start()
    try:
        done = subprocess.run([str(BIN / "inspect"), "eval", "exp/tiny.py", "--model", "openai/stub", "-M",
                               "responses_api=false", "--model-base-url", api_base, "--log-dir", "logs",
                               "--display", "none"], env={**os.environ, "OPENAI_API_KEY": "none"},
                              capture_output=True, text=True, timeout=600)
        native = _native(suite, api_base)
    finally:
        server.stop()
    assert done.returncode == 0, done.stderr[-3000:]
    (log,) = Path("logs").glob("*.eval")
    from inspect_ai.log import read_eval_log

    read = read_eval_log(str(log))
    scored = {(s.id, s.epoch - 1): s.scores["parsed_answer"].answer for s in read.samples or []}
    assert len(scored) == 81 * 3 and scored == {key: value[0] for key, value in _answers(native).items()}
    assert None in scored.values()  # the scorer records the parsed answer, null for an unparsed reply
    output = _spec("import", "inspect-log", str(log), "--suite", str(suite), "--out", "imported")
    assert output.splitlines() == ["imported 243 answers of openai/stub -> imported", "next: spec score imported"]
    assert _answers(Path("imported")) == _answers(native)
    native_scores = _scores(native)
    assert len(native_scores) >= 2 and _scores(Path("imported")) == native_scores


def _promptfoo_file(path: Path, results: list[dict[str, Any]]) -> Path:
    path.write_text(json.dumps({"results": {"results": results}}), encoding="utf-8")
    return path


def test_an_answer_no_row_matches_is_refused_with_file_and_result(suite: Path) -> None:
    from spec_audits.runner.commands.publish.export import chat

    loaded = read_suite(suite)
    row = loaded.rows[0]
    sent = chat(loaded, row, "promptfoo")
    result = {"testCase": {"description": row.id, "vars": {"messages": sent}}, "provider": {"id": "p"},
              "response": {"output": "X"}}
    edited = {**result, "testCase": {"description": row.id, "vars": {"messages": [{**sent[0], "content": "edited"}]}}}
    unknown = {**result, "testCase": {"description": "0000", "vars": {"messages": sent}}}
    for number in (1, 0):
        path = _promptfoo_file(Path(f"r{number}.json"), [result, edited] if number else [unknown])
        done = CliRunner().invoke(main, ["import", "promptfoo", str(path), "--suite", str(suite), "--out", "x"])
        assert done.exit_code == 1 and isinstance(done.exception, SystemExit) and not Path("x").exists()
        problem = (f"the chat sent is not row {row.id}'s as the suite holds it (edited after the export?)" if number
                   else f"id '0000' is no row of the suite {suite}: was the file made from `spec export` of this "
                   "suite?")
        assert done.output == f"Error: {path}: results[{number}]: {problem}\n"
    done = CliRunner().invoke(main, ["import", "promptfoo", "r0.json", "--suite", str(suite), "--out", "x",
                                     "--skip-unmatched"])
    assert done.exit_code == 2 and done.output.endswith("Error: --skip-unmatched does not apply to promptfoo: every "
                                                        "answer to an exported suite matches its row, and one that "
                                                        "does not is an error\n")
    four = [result] * 4  # the row draws 3 samples
    done = CliRunner().invoke(main, ["import", "promptfoo", str(_promptfoo_file(Path("r4.json"), four)), "--suite",
                                     str(suite), "--out", "x"])
    assert done.output == f"Error: r4.json: results[3]: answer 4 of row {row.id}, which draws 3\n"


def test_an_inspect_log_answering_an_epoch_twice_is_refused(suite: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A run folder holds one row per (item, sample), which scoring insists on: a log (a stranger's, or one joined by
    hand) holding one sample's epoch twice is refused naming it, and no run folder is written."""
    from types import SimpleNamespace

    from spec_audits.runner import peer_imports
    from spec_audits.runner.commands.publish.export import chat

    loaded = read_suite(suite)
    row = loaded.rows[0]
    sent = [SimpleNamespace(role=m["role"], text=m["content"]) for m in chat(loaded, row, "inspect")]
    sample = SimpleNamespace(id=row.id, epoch=2, input=sent, error=None,
                             output=SimpleNamespace(usage=None, completion="X"))
    log = SimpleNamespace(eval=SimpleNamespace(model="openai/stub"), samples=[sample, sample])
    monkeypatch.setattr(peer_imports, "_inspect_log", lambda path: log)
    Path("run.eval").write_bytes(b"")
    done = CliRunner().invoke(main, ["import", "inspect-log", "run.eval", "--suite", str(suite), "--out", "x"])
    assert done.exit_code == 1 and isinstance(done.exception, SystemExit) and not Path("x").exists()
    assert done.output == f"Error: run.eval: sample {row.id} epoch 2: the log answers it twice; an import takes each " \
                          "epoch once\n"
