"""A stranger's suite is data: it cannot configure the call, reach another server with the user's key,
forge answers, or be edited after it was compiled (issue 19, items 1 and 2)."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from spec_audits.cli import main
from spec_audits.contract.reader import CHANGED_SUITE, EDITED_SUITE, NOT_COMPILED, read_run_info, read_suite
from spec_audits.contract.seeding import canonical_json
from spec_audits.contract.suite_terms import DECODE_KEYS
from spec_audits.contract.writer import file_sha256, row_id
from spec_audits.runner.call import CallSettings, ModelClient
from spec_audits.runner.execute import run_suite
from spec_audits.runner.item_runner import Runner
from spec_audits.runner.plan import WorkItem, estimate
from spec_audits.runner.run_config import RunConfig
from spec_audits.runner.services.cache import ResponseCache
from spec_audits.runner.services.provider_errors import FatalError
from tests.stub_server import StubConfig, StubServer
from tests.support import ROOT, forced_choice_rows, rewrite_suite, suite_rows, write_suite

FAKE_KEY = "sk-fake-0123456789abcdef-USERS-OWN-KEY"
JUDGE = {"labels": ["ACK", "DENIED"], "prompt": "Reply: {{ reply }}"}


@pytest.fixture
def ours() -> Iterator[StubServer]:
    """The server the user names with --api-base."""
    server = StubServer(StubConfig(record=True))
    server.start()
    yield server
    server.stop()


@pytest.fixture
def theirs() -> Iterator[StubServer]:
    """The server a hostile suite names."""
    server = StubServer(StubConfig(replies=(("", "FORGED"),)))
    server.start()
    yield server
    server.stop()


def hostile_suite(folder: Path, edit: Callable[[dict[str, Any]], None]) -> Path:
    """A two-row suite whose rows `edit` changed, written as a stranger would: consistent ids and hashes,
    so that only the closed schema stands between it and the model call."""
    write_suite(folder, forced_choice_rows(2, 1, followups=[{"name": "probe", "content": "Why?", "judge": JUDGE}]))
    rows = []
    for row in suite_rows(folder):
        del row["id"]
        row["messages"].insert(1, {"role": "assistant", "generate": True})
        edit(row)
        rows.append({"id": row_id(canonical_json(row)), **row})
    lines = sorted(json.dumps(row) + "\n" for row in rows)
    (folder / "suite.jsonl").write_text("".join(lines), encoding="utf-8")
    manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    manifest["files"]["suite.jsonl"] = file_sha256(folder / "suite.jsonl")
    (folder / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    return folder


def _first_id(suite: Path) -> str:
    return json.loads((suite / "suite.jsonl").read_text(encoding="utf-8").splitlines()[0])["id"]


DECODE_SETTINGS = f"is not a decode setting (a suite may set {', '.join(DECODE_KEYS)})"
ROW_FIELD = "is not a field a suite row may carry"
# where the key goes, the location the error names, and what it says the key is not
PLACES: dict[str, tuple[Callable[[dict[str, Any], str, Any], None], str, str]] = {
    "row decode": (lambda row, k, v: row["decode"].update({k: v}), "decode", DECODE_SETTINGS),
    "generated turn": (lambda row, k, v: row["messages"][1].update(decode={k: v}), "messages.1.decode",
                       DECODE_SETTINGS),
    "follow-up": (lambda row, k, v: row["followups"][0].update(decode={k: v}), "followups.0.decode",
                  DECODE_SETTINGS),
    "judge": (lambda row, k, v: row["followups"][0]["judge"].update({k: v}), "followups.0.judge", ROW_FIELD),
    "row": (lambda row, k, v: row.update({k: v}), "", ROW_FIELD),
}
CALL_SETTINGS = {"base_url": "http://127.0.0.1:9/v1", "api_base": "http://127.0.0.1:9/v1", "api_key": "theirs",
                 "extra_headers": {"X-Steal": "1"}, "mock_response": "A", "callbacks": ["x"]}


@pytest.mark.parametrize("key", list(CALL_SETTINGS))
@pytest.mark.parametrize("place", list(PLACES))
def test_a_row_naming_call_settings_is_refused_with_file_row_and_key(
    tmp_path: Path, ours: StubServer, place: str, key: str
) -> None:
    put, where, what = PLACES[place]
    suite = hostile_suite(tmp_path / "suite", lambda row: put(row, key, CALL_SETTINGS[key]))
    out = tmp_path / "run"
    result = CliRunner().invoke(main, ["run", str(suite), "--out", str(out), "--model", "openai/stub",
                                       "--api-base", f"http://127.0.0.1:{ours.port}/v1", "--no-progress"])
    assert result.exit_code == 1 and isinstance(result.exception, SystemExit), result.exception
    located = f"{where}.{key}" if where else key
    assert result.output == (f"Error: {suite / 'suite.jsonl'}:1: row {_first_id(suite)}: {located}: {key!r} "
                             f"{what}; {NOT_COMPILED}\n")
    assert ours.stats.requests == 0 and not out.exists()


@pytest.mark.parametrize("model", ["http://127.0.0.1:9/v1", "local/../../x.gguf", "openai/../x", "local/x.gguf"])
def test_a_judge_model_that_is_no_model_name_is_refused(tmp_path: Path, model: str) -> None:
    suite = hostile_suite(tmp_path / "suite", lambda row: row["followups"][0]["judge"].update(model=model))
    result = CliRunner().invoke(main, ["run", str(suite), "--out", str(tmp_path / "run"), "--dry-run"])
    assert result.exit_code == 1 and isinstance(result.exception, SystemExit), result.exception
    assert result.output.startswith(f"Error: {suite / 'suite.jsonl'}:1: followups.0.judge.model: '{model}' is "
                                    "not a model name: a suite names a judge as provider/model")


def test_the_users_key_reaches_no_server_but_api_base(tmp_path: Path, ours: StubServer, theirs: StubServer) -> None:
    """`spec run` in a child process holding a key, on a suite whose rows name another server and headers."""
    theirs_url = f"http://127.0.0.1:{theirs.port}/v1"
    suite = hostile_suite(tmp_path / "suite", lambda row: row["decode"].update(
        base_url=theirs_url, extra_headers={"Authorization": "Bearer x", "X-Steal": "1"}))
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OPENAI_API_KEY": FAKE_KEY}
    command = [sys.executable, "-c", "from spec_audits.cli import main; main()", "run", str(suite), "--out",
               str(tmp_path / "run"), "--model", "openai/stub", "--api-base", f"http://127.0.0.1:{ours.port}/v1",
               "--no-progress"]
    child = subprocess.run(command, env=env, capture_output=True, text=True, timeout=300)
    assert child.returncode == 1, child.stderr
    assert f"row {_first_id(suite)}: decode.base_url: 'base_url' is not a decode setting" in child.stderr
    assert "Traceback" not in child.stderr and FAKE_KEY not in child.stderr + child.stdout
    assert theirs.stats.requests == 0 and ours.stats.requests == 0


def test_the_call_layer_sends_nothing_but_decode_settings(tmp_path: Path, theirs: StubServer) -> None:
    """Defence in depth: a row that got past the reader still cannot redirect the call or mock its answer,
    and no forged answer is cached or recorded."""
    theirs_url = f"http://127.0.0.1:{theirs.port}/v1"
    cache = ResponseCache(tmp_path / "cache.sqlite")
    client = ModelClient(CallSettings("openai/stub", theirs_url), cache)
    messages = [{"role": "user", "content": "A or B?"}]
    for params, extras in (({"mock_response": "A"}, {}), ({"max_tokens": 2}, {"base_url": theirs_url})):
        with pytest.raises(FatalError, match="^refusing to send '(mock_response|base_url)' to the model"):
            asyncio.run(client.call(messages, params, "0", extras))
    row = forced_choice_rows(1, 1)[0]
    row.decode["mock_response"] = "A"  # type: ignore[typeddict-unknown-key]  # as if the reader had let it by
    runner = Runner(RunConfig(suite_dir=tmp_path, out=tmp_path / "run", model="openai/stub", api_base=theirs_url),
                    "sample", cache)
    with pytest.raises(FatalError, match="^refusing to send 'mock_response'"):
        asyncio.run(runner.process(WorkItem(row, 0)))
    assert theirs.stats.requests == 0 and client.calls == 0
    assert cache._db.execute("SELECT COUNT(*) FROM responses").fetchone() == (0,)
    cache.close()


def test_a_suite_edited_after_compiling_is_refused_before_the_first_call(
    make_suite: Callable[..., Path], tmp_path: Path, ours: StubServer
) -> None:
    suite = make_suite(n=3, samples=1)
    recorded = json.loads((suite / "manifest.json").read_text())["files"]["suite.jsonl"]
    text = (suite / "suite.jsonl").read_text().replace("Which do you prefer?", "Which is worse?")  # ids kept
    (suite / "suite.jsonl").write_text(text)
    out = tmp_path / "run"
    result = CliRunner().invoke(main, ["run", str(suite), "--out", str(out), "--model", "openai/stub",
                                       "--api-base", f"http://127.0.0.1:{ours.port}/v1", "--no-progress"])
    assert result.exit_code == 1 and isinstance(result.exception, SystemExit), result.exception
    assert result.output == (f"Error: {suite / 'suite.jsonl'}: sha256 is {file_sha256(suite / 'suite.jsonl')}, "
                             f"but manifest.json records {recorded}; {EDITED_SUITE}\n")
    assert ours.stats.requests == 0 and not out.exists()


def test_a_resume_onto_another_suite_is_refused(make_suite: Callable[..., Path], tmp_path: Path,
                                                ours: StubServer) -> None:
    suite, out = make_suite(n=3, samples=1), tmp_path / "run"
    config = RunConfig(suite_dir=suite, out=out, model="openai/stub", api_base=f"http://127.0.0.1:{ours.port}/v1",
                       progress=False)
    run_suite(config)
    info = read_run_info(out)
    assert info.suite_sha256 == file_sha256(suite / "suite.jsonl")
    results = (out / "results.jsonl").read_bytes()
    rewrite_suite(suite, lambda _, row: row["messages"][-1].update(content="Which is worse? A or B."))
    old, new = info.suite_manifest_sha256, file_sha256(suite / "manifest.json")
    result = CliRunner().invoke(main, ["run", str(suite), "--out", str(out), "--model", "openai/stub",
                                       "--api-base", f"http://127.0.0.1:{ours.port}/v1", "--no-progress"])
    assert result.exit_code == 1 and isinstance(result.exception, SystemExit), result.exception
    assert result.output == (f"Error: {out / 'run.json'}: the run was made on a suite whose manifest.json has sha256 "
                             f"{old}, but {suite / 'manifest.json'} has sha256 {new}; {CHANGED_SUITE}\n")
    assert ours.stats.requests == 3 and (out / "results.jsonl").read_bytes() == results


def test_the_judge_a_suite_names_is_counted_and_the_command_line_overrides_it(
    tmp_path: Path, ours: StubServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    def judged(row: dict[str, Any]) -> None:
        row["followups"][0]["judge"]["model"] = "openai/suite-judge"
        del row["messages"][1]  # no generated turn

    suite = hostile_suite(tmp_path / "suite", judged)
    items = [WorkItem(row, 0) for row in read_suite(suite).rows]
    assert [(e.model, e.calls) for e in estimate(items, mode="sample", model="openai/stub", judge_model=None)] == [
        ("openai/stub", 4), ("openai/suite-judge", 2)]
    assert [(e.model, e.calls) for e in estimate(items, mode="sample", model="openai/stub",
                                                 judge_model="openai/mine")] == [("openai/stub", 4), ("openai/mine", 2)]
    monkeypatch.setenv("OPENAI_BASE_URL", f"http://127.0.0.1:{ours.port}/v1")  # where the judge's calls go
    monkeypatch.setenv("OPENAI_API_KEY", FAKE_KEY)
    run_suite(RunConfig(suite_dir=suite, out=tmp_path / "run", model="openai/stub", judge_model="openai/mine",
                        api_base=f"http://127.0.0.1:{ours.port}/v1", progress=False))
    models = [body["model"] for body in ours.stats.bodies]  # the two rows' judge prompts agree: one call, cached
    assert models.count("stub") == 4 and set(models) == {"stub", "mine"}
