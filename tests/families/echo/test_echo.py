"""A family added by one folder and one registry line compiles, runs on the loopback stub and scores."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from spec_audits.cli import main
from spec_audits.families.registry import register, unregister
from tests.families.echo import FAMILY
from tests.stub_server import StubServer

SPEC = '''suite echo "Echo"
seed 1
template question "Answer A or B: {{ condition }}?"
design echo:
  conditions hello, goodbye
  prompt question
  analysis echo
'''


@pytest.fixture
def echo() -> Iterator[None]:
    register(FAMILY)  # the one registry line
    yield
    unregister(FAMILY.name)


@pytest.fixture
def spec(tmp_path: Path) -> Path:
    path = tmp_path / "echo.spec"
    path.write_text(SPEC, encoding="utf-8")
    return path


def _spec(*args: str) -> Result:
    return CliRunner().invoke(main, list(args))


def test_echo_compiles_runs_on_the_stub_scores_and_reports(echo: None, spec: Path, tmp_path: Path) -> None:
    assert _spec("check", str(spec)).output == f"{spec}: design 'echo' is valid: 2 conditions\n"
    suite, run_dir = tmp_path / "suite", tmp_path / "run"
    compiled = _spec("compile", str(spec), "-o", str(suite))
    assert compiled.exit_code == 0, compiled.output
    assert json.loads((suite / "manifest.json").read_text())["analysis"] == {"family": "echo"}
    server = StubServer()
    api_base = server.start()
    try:
        ran = _spec("run", str(suite), "--model", "openai/stub", "--api-base", api_base, "--out", str(run_dir),
                    "--no-progress")
    finally:
        server.stop()
    assert ran.exit_code == 0, ran.output
    scored = _spec("score", str(run_dir))
    assert scored.exit_code == 0, scored.output
    assert scored.output == f"6 echo answers scored -> {run_dir / 'score'}\n"
    reported = _spec("report", str(run_dir / "score"))
    assert reported.exit_code == 0, reported.output
    assert "## Answers per item\n\n| item | outcome | answers |" in (run_dir / "score" / "report.md").read_text()


def test_echo_refuses_options_it_does_not_read(echo: None, spec: Path, tmp_path: Path) -> None:
    suite = tmp_path / "suite"
    assert _spec("compile", str(spec), "-o", str(suite)).exit_code == 0
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    (run_dir / "run.json").write_text(json.dumps({
        "suite_dir": str(suite), "suite_manifest_sha256": "", "model": "m", "mode": "sample", "settings": {},
        "started": "2026-01-01T00:00:00+00:00", "planned": 0, "done": 0, "failed": 0}), encoding="utf-8")
    result = _spec("score", str(run_dir), "--bootstrap", "9")
    assert result.exit_code == 2 and isinstance(result.exception, SystemExit)
    assert result.output.splitlines()[-1] == (
        "Error: --bootstrap does not apply to echo runs: echo scoring takes no options")


def test_without_its_registry_line_the_analysis_is_unknown(spec: Path) -> None:
    result = _spec("check", str(spec))
    assert result.exit_code == 1 and isinstance(result.exception, SystemExit)
    assert result.output.splitlines()[0] == f"{spec}:7:12: error: unknown analysis 'echo'"
    assert "  hint: valid names: 'bias_decomposition', 'cue_visibility', 'influence_pairs'" in result.output
