"""The promptfoo export read by the promptfoo CLI itself (a pinned release from the npm registry, installed
once under <user cache>/spec/npm): its config validator; an eval on promptfoo's `echo` provider (which returns
the rendered prompt: every test fails); an eval of the exported provider against a loopback stub, whose
results `spec import promptfoo` brings back as the answers a native run of the same stub records.

Skipped only when npm is not installed. 0.121.20 is the last release that runs on Node 20 (later ones
need Node >= 22.22)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from spec_audits.cli import main
from spec_audits.contract.reader import read_suite
from spec_audits.contract.writer import suite_row
from spec_audits.runner.commands.publish.export import chat, to_promptfoo
from tests.runner.publish.project import make_project
from tests.runner.publish.test_peer_roundtrip import ByPrompt, _answers, _native
from tests.support import forced_choice_rows, write_suite

VERSION = "0.121.20"
FIRST = 8  # tests run per eval: each spawns the Python assertion, about half a second apiece


def _install_dir() -> Path:
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return cache / "spec" / "npm" / f"promptfoo-{VERSION}"


@pytest.fixture(scope="module")
def promptfoo() -> Path:
    """The promptfoo command, installed with npm on first use (a few minutes) into a folder that is
    renamed into place only when the install finished."""
    npm = shutil.which("npm")
    if npm is None:
        pytest.skip("npm is not installed, so the promptfoo CLI cannot be installed to check the export")
    target = _install_dir()
    command = target / "node_modules" / ".bin" / "promptfoo"
    if not command.exists():
        partial = target.with_name(f"{target.name}.tmp-{os.getpid()}")
        shutil.rmtree(partial, ignore_errors=True)
        done = subprocess.run([npm, "install", "--no-audit", "--no-fund", "--prefix", str(partial),
                               f"promptfoo@{VERSION}"], capture_output=True, text=True, timeout=1200)
        if done.returncode != 0:
            pytest.fail(f"npm install promptfoo@{VERSION} failed:\n{done.stderr[-3000:]}")
        shutil.rmtree(target, ignore_errors=True)
        partial.rename(target)
    return command


def _run(promptfoo: Path, args: list[str], home: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PROMPTFOO_CONFIG_DIR": str(home), "PROMPTFOO_DISABLE_TELEMETRY": "1",
           "PROMPTFOO_DISABLE_UPDATE": "1"}
    return subprocess.run([str(promptfoo), *args], env=env, capture_output=True, text=True, timeout=300)


@pytest.fixture
def exported(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    to_promptfoo(read_suite(make_project(tmp_path)), tmp_path / "pf", "openai:chat:stub")
    return tmp_path / "pf"


def _eval(promptfoo: Path, exported: Path, tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """promptfoo eval of the first FIRST tests, its assertion run by this Python (which has spec installed)."""
    os.environ["PROMPTFOO_PYTHON"] = sys.executable
    return _run(promptfoo, ["eval", "-c", str(exported / "promptfooconfig.yaml"), "-o", str(tmp_path / "out.json"),
                            "--filter-first-n", str(FIRST), "--no-cache", "--no-write", "--no-table",
                            "--no-progress-bar", "--no-share", *args], tmp_path / "home")


@pytest.mark.slow
def test_promptfoo_validates_the_exported_config(promptfoo: Path, exported: Path, tmp_path: Path) -> None:
    result = _run(promptfoo, ["validate", "config", "-c", str(exported / "promptfooconfig.yaml")], tmp_path / "home")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Configuration is valid." in result.stdout


@pytest.mark.slow
def test_an_echo_of_the_prompt_fails_every_test(promptfoo: Path, exported: Path, tmp_path: Path) -> None:
    result = _eval(promptfoo, exported, tmp_path, "-r", "echo")
    assert result.returncode == 100, result.stdout + result.stderr  # promptfoo's status when some test fails
    outcomes = json.loads((tmp_path / "out.json").read_text())["results"]["results"]
    suite = read_suite(Path("out/tiny"))
    rows = {row.id: row for row in suite.rows}
    assert len(outcomes) == FIRST * 3  # three samples per row: promptfoo's repeat
    for outcome in outcomes:  # the reply is the rendered prompt, the row's chat, which names both options
        row = rows[outcome["testCase"]["description"]]
        assert json.loads(outcome["response"]["output"]) == chat(suite, row, "promptfoo")
        assert (outcome["success"], outcome["error"]) == (False, "no valid answer (spec reads none of X, Y)")


@pytest.mark.slow
def test_promptfoo_results_import_as_the_native_run_answered(promptfoo: Path, exported: Path,
                                                             tmp_path: Path) -> None:
    server = ByPrompt()
    api_base = server.start()
    try:
        os.environ.update(OPENAI_BASE_URL=api_base, OPENAI_API_KEY="none")
        result = _eval(promptfoo, exported, tmp_path)
        native = _native(Path("out/tiny"), api_base)
    finally:
        for name in ("OPENAI_BASE_URL", "OPENAI_API_KEY", "PROMPTFOO_PYTHON"):
            os.environ.pop(name, None)
        server.stop()
    assert result.returncode in (0, 100), result.stdout + result.stderr
    output = CliRunner().invoke(main, ["import", "promptfoo", str(tmp_path / "out.json"), "--suite", "out/tiny",
                                       "--out", "imported"])
    assert output.exception is None and output.exit_code == 0, output.output
    assert output.output.splitlines() == [f"imported {FIRST * 3} answers of openai:chat:stub -> imported",
                                          "next: spec score imported"]
    imported = _answers(Path("imported"))
    assert len(imported) == FIRST * 3 and imported == {key: _answers(native)[key] for key in imported}
    outcomes = json.loads((tmp_path / "out.json").read_text())["results"]["results"]
    assert {o["success"] for o in outcomes} == {answer is not None for answer, _, _ in imported.values()}


@pytest.mark.slow
def test_a_suites_text_is_never_rendered_as_a_template(promptfoo: Path, tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    (row,) = forced_choice_rows(1, 1)
    body = row.model_dump(exclude={"id"}, exclude_none=True)
    body["messages"][1]["content"] = "Seven: {{ 7*7 }} key: {{ env.SPEC_TEST_SECRET }} A or B?"
    to_promptfoo(read_suite(write_suite(tmp_path / "s", [suite_row(body)])), tmp_path / "pf", "echo")
    monkeypatch.setenv("SPEC_TEST_SECRET", "sk-not-to-be-sent")
    monkeypatch.setenv("PROMPTFOO_PYTHON", sys.executable)
    result = _run(promptfoo, ["eval", "-c", str(tmp_path / "pf" / "promptfooconfig.yaml"), "-o",
                              str(tmp_path / "out.json"), "--no-cache", "--no-write", "--no-table", "--no-progress-bar",
                              "--no-share"], tmp_path / "home")
    assert result.returncode == 100, result.stdout + result.stderr
    (outcome,) = json.loads((tmp_path / "out.json").read_text())["results"]["results"]
    sent = json.loads(outcome["response"]["output"])  # echo: what a provider would have been sent
    assert sent[1]["content"] == "Seven: {{ 7*7 }} key: {{ env.SPEC_TEST_SECRET }} A or B?"
