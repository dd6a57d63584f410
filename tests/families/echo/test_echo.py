"""A family added by one folder and one registry line, or installed from another distribution through the
`spec_audits.families` entry-point group, compiles, runs on the loopback stub and scores; an installed family
that cannot be used is a clear error."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from spec_audits.dispatch import registry
from spec_audits.dispatch.registry import register, unregister
from tests.families.echo import FAMILY
from tests.plugins import install, invoke, run_on_stub
from tests.stub_server import StubConfig

SPEC = '''suite echo "Echo"
seed 1
template question "Answer A or B: {{ condition }}?"
design echo:
  conditions hello, goodbye
  prompt question
  analysis echo
'''


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A site-packages folder on sys.path, seen afresh by the registry, its families forgotten afterwards."""
    folder = tmp_path / "site"
    folder.mkdir()
    monkeypatch.syspath_prepend(str(folder))
    registry.installed.cache_clear()
    yield folder
    for name in registry.installed():
        unregister(name)
    registry.installed.cache_clear()


@pytest.fixture(params=["registered", "installed"])
def echo(request: pytest.FixtureRequest) -> Iterator[None]:
    """The echo family by its one registry line, or installed from a distribution of its own."""
    if request.param == "registered":
        register(FAMILY)  # the one registry line
    else:  # an entry point at a module that defines FAMILY; nothing in spec names it
        # the worked example that ships with the package (docs/families.md), through its entry point
        install(request.getfixturevalue("site"), "spec-echo-family", {"echo": "spec_audits.examples.echo:FAMILY"}, {})
    yield
    unregister(FAMILY.name)


@pytest.fixture
def spec(tmp_path: Path) -> Path:
    path = tmp_path / "echo.spec"
    path.write_text(SPEC, encoding="utf-8")
    return path


def test_echo_compiles_runs_on_the_stub_scores_and_reports(echo: None, spec: Path, tmp_path: Path) -> None:
    """... and records the confidence each reply states through its reader: null where it is out of bounds."""
    assert invoke("check", str(spec)).output == f"{spec}: design 'echo' is valid: 2 conditions\n"
    suite, run_dir = tmp_path / "suite", tmp_path / "run"
    compiled = invoke("compile", str(spec), "-o", str(suite))
    assert compiled.exit_code == 0, compiled.output
    assert json.loads((suite / "manifest.json").read_text())["analysis"] == {"family": "echo"}
    replies = (("hello", "A. Confidence: **70**"), ("goodbye", "B. Confidence: 180"))
    ran = run_on_stub(suite, run_dir, StubConfig(replies=replies))
    assert ran.exit_code == 0, ran.output
    scored = invoke("score", str(run_dir))
    assert scored.exit_code == 0, scored.output
    lines = scored.output.splitlines()  # then the report's first table and the commands to run next
    assert lines[:3] == [f"6 echo answers scored -> {run_dir / 'score'}", "",
                         "item              outcome  answers  mean stated confidence"]
    assert lines[-2].startswith(f"next: spec report {run_dir / 'score'}")
    results = [json.loads(line) for line in (run_dir / "results.jsonl").read_text().splitlines()]
    assert sorted((r["outcome"], r["recorded"]["confidence"]) for r in results) == \
        [("first", 70)] * 3 + [("second", None)] * 3
    summary = json.loads((run_dir / "score" / "summary.json").read_text())
    assert sorted((a["outcome"], a["answers"], a["confidence"]) for a in summary["answers"]) == \
        [("first", 3, 70.0), ("second", 3, None)]
    reported = invoke("report", str(run_dir / "score"))
    assert reported.exit_code == 0, reported.output
    report = (run_dir / "score" / "report.md").read_text()
    assert "## Answers per item\n\n| item | outcome | answers | mean stated confidence |" in report
    assert "| first | 3 | 70.0 |" in report and "| second | 3 | none stated |" in report


def test_echo_refuses_options_it_does_not_read(echo: None, spec: Path, tmp_path: Path) -> None:
    suite = tmp_path / "suite"
    assert invoke("compile", str(spec), "-o", str(suite)).exit_code == 0
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    (run_dir / "run.json").write_text(json.dumps({
        "suite_dir": str(suite), "suite_manifest_sha256": "", "model": "m", "mode": "sample", "settings": {},
        "started": "2026-01-01T00:00:00+00:00", "planned": 0, "done": 0, "failed": 0}), encoding="utf-8")
    result = invoke("score", str(run_dir), "--bootstrap", "9")
    assert result.exit_code == 2 and isinstance(result.exception, SystemExit)
    assert result.output.splitlines()[-1] == (
        "Error: --bootstrap does not apply to echo runs: echo scoring takes no options")


def test_without_its_registry_line_the_analysis_is_unknown(spec: Path) -> None:
    result = invoke("check", str(spec))
    assert result.exit_code == 1 and isinstance(result.exception, SystemExit)
    assert result.output.splitlines()[0] == f"{spec}:7:12: error: unknown analysis 'echo'"
    assert f"  hint: valid names: {', '.join(map(repr, registry.names()))}" in result.output


def _refused(spec: Path) -> str:
    result = invoke("check", str(spec))
    assert result.exit_code == 1 and isinstance(result.exception, SystemExit), result.output
    return result.output


def test_an_installed_family_that_fails_to_import_is_named_with_what_to_do(site: Path, spec: Path) -> None:
    install(site, "spec-broken", {"echo": "spec_broken:FAMILY"}, {"spec_broken": "import no_such_module\n"})
    assert _refused(spec) == (
        "Error: design family 'echo' from spec-broken 0.1 (entry point echo = spec_broken:FAMILY) could not be "
        "loaded: ModuleNotFoundError: No module named 'no_such_module'. Reinstall or uninstall that distribution\n")


def test_two_distributions_declaring_one_family_name_is_an_error(site: Path, spec: Path) -> None:
    for dist in ("spec-echo-a", "spec-echo-b"):
        install(site, dist, {"echo": f"{dist.replace('-', '_')}:FAMILY"}, {})
    assert _refused(spec) == (
        "Error: design family 'echo' is declared by 2 installed distributions: spec-echo-a 0.1 (entry point "
        "echo = spec_echo_a:FAMILY); spec-echo-b 0.1 (entry point echo = spec_echo_b:FAMILY). Uninstall all but "
        "one of them\n")


def test_an_installed_family_may_not_take_a_builtin_name(site: Path, tmp_path: Path) -> None:
    install(site, "spec-impostor", {registry.DEFAULT: "spec_impostor:FAMILY"}, {})
    spec = tmp_path / "default.spec"
    spec.write_text(SPEC.replace("  analysis echo\n", ""), encoding="utf-8")
    assert _refused(spec) == (
        f"Error: design family {registry.DEFAULT!r} is built into spec, and spec-impostor 0.1 (entry point "
        f"{registry.DEFAULT} = spec_impostor:FAMILY) declares it too: rename that family, or uninstall its "
        "distribution\n")


def test_an_installed_entry_point_must_give_a_family_of_its_name(site: Path, spec: Path) -> None:
    install(site, "spec-misnamed", {"echo": "spec_misnamed:FAMILY"},
            {"spec_misnamed": "from spec_audits.sdk import replaced\nfrom tests.families.echo import FAMILY as ECHO\n"
                              "FAMILY = replaced(ECHO, name='other')\n"})
    assert _refused(spec).endswith(
        "calls itself 'other': name the entry point by the family's analysis name\n")
