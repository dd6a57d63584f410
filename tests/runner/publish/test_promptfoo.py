"""The promptfoo export read by the promptfoo CLI itself (a pinned release from the npm registry, installed
once under <user cache>/spec/npm): its config validator, then an eval of every test on two local
providers, promptfoo's `echo` (which returns the rendered prompt) and a fixed reply, so nothing calls out.

Skipped only when npm is not installed. 0.121.20 is the last release that runs on Node 20 (later ones
need Node >= 22.22)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from spec_audits.contract.reader import read_suite
from spec_audits.runner.publish.export import chat, to_promptfoo
from tests.runner.publish.project import make_project

VERSION = "0.121.20"
FIXED_REPLY = 'module.exports = class { id() { return "fixed-X"; } async callApi() { return { output: "X" }; } };\n'


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
    to_promptfoo(read_suite(make_project(tmp_path)), tmp_path / "pf")
    return tmp_path / "pf"


@pytest.mark.slow
def test_promptfoo_validates_the_exported_config(promptfoo: Path, exported: Path, tmp_path: Path) -> None:
    result = _run(promptfoo, ["validate", "config", "-c", str(exported / "promptfooconfig.yaml")], tmp_path / "home")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Configuration is valid." in result.stdout


@pytest.mark.slow
def test_promptfoo_renders_every_row_as_its_chat_and_grades_the_reply(promptfoo: Path, exported: Path,
                                                                       tmp_path: Path) -> None:
    (tmp_path / "fixed.js").write_text(FIXED_REPLY)
    args = ["eval", "-c", str(exported / "promptfooconfig.yaml"), "-r", "echo", f"file://{tmp_path / 'fixed.js'}",
            "-o", str(tmp_path / "out.json"), "--no-cache", "--no-write", "--no-table", "--no-progress-bar",
            "--no-share"]
    result = _run(promptfoo, args, tmp_path / "home")
    assert result.returncode == 100, result.stdout + result.stderr  # promptfoo's status when some test fails
    outcomes = json.loads((tmp_path / "out.json").read_text())["results"]["results"]
    suite = read_suite(Path("out/tiny"))
    rows = {row.id: row for row in suite.rows}
    assert len(outcomes) == 2 * len(rows)
    for outcome in outcomes:
        row = rows[outcome["testCase"]["description"]]
        assert outcome["metadata"]["cell"] == row.cell
        if outcome["provider"]["id"] == "echo":  # the reply is the rendered prompt: the row's chat, no answer
            assert json.loads(outcome["response"]["output"]) == chat(suite, row, "promptfoo")
            assert (outcome["success"], outcome["error"]) == (False, 'Expected output to contain one of "X, Y"')
        else:
            assert outcome["provider"]["id"] == "fixed-X" and outcome["success"] is True
