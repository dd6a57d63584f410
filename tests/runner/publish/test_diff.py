"""`spec diff A B`: rows added, removed and changed by cell, and manifest fields, between suites or bundles."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from spec_audits.compiler.dispatch.build import compile_file
from spec_audits.contract.reader import read_suite
from spec_audits.runner.commands.publish.bundle import write_bundle
from spec_audits.runner.commands.publish.cli import diff
from tests.runner.publish.project import make_project


@pytest.fixture
def suite(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return make_project(tmp_path)


def _diff(a: Path | str, b: Path | str) -> list[str]:
    result = CliRunner().invoke(diff, [str(a), str(b)])
    assert result.exit_code == 0 and result.exception is None, result.output
    return result.output.splitlines()


def test_a_suite_and_its_bundle_do_not_differ(suite: Path) -> None:
    write_bundle(suite, Path("tiny.tar.gz"))
    assert _diff(suite, "tiny.tar.gz") == ["rows: 81 -> 81: 0 added, 0 removed, 0 changed, 81 unchanged",
                                          "manifest: 0 fields changed"]


def test_an_edited_cue_changes_its_rows_by_cell_and_the_manifest(suite: Path) -> None:
    Path("vocab.spec").write_text('influence third append "Think hard of {{ target.plural }}."\n')
    compile_file(Path("tiny.spec"), Path("out/edited"))
    before, after = read_suite(suite), read_suite("out/edited")
    lines = _diff(suite, "out/edited")
    assert lines[0] == "rows: 81 -> 81: 0 added, 0 removed, 18 changed, 63 unchanged"
    assert lines[1] == "manifest: 1 fields changed"  # spec_sha256 hashes tiny.spec only, not what it imports
    assert lines[2] == "changed:"
    old = next(r for r in before.rows if r.id not in {x.id for x in after.rows} and r.cell["order"] == "AB")
    assert any(line.startswith(f"  {old.id} -> ") and line.endswith("): messages") for line in lines)
    assert "  ... and 8 more" in lines
    assert lines[-2:] == ["manifest fields:", f"  files.suite.jsonl: \"{before.manifest.files['suite.jsonl']}\" -> "
                                              f"\"{after.manifest.files['suite.jsonl']}\""]


def test_more_sizes_add_rows(suite: Path) -> None:
    spec = Path("tiny.spec").read_text().replace("n_A in 1..3, n_B in 1..3", "n_A in 1..4, n_B in 1..4")
    Path("wide.spec").write_text(spec)
    compile_file(Path("wide.spec"), Path("out/wide"))
    lines = _diff(suite, "out/wide")
    assert lines[0] == "rows: 81 -> 144: 63 added, 0 removed, 0 changed, 81 unchanged"
    assert lines[2] == "added:" and all("n_A=4" in line or "n_B=4" in line for line in lines[3:13])
    assert lines[13] == "  ... and 53 more"
    assert {"  cells.n_A: 3 -> 4", "  rows: 81 -> 144", '  spec_file: "tiny.spec" -> "wide.spec"'} <= set(lines)
    assert _diff("out/wide", suite)[0] == "rows: 144 -> 81: 0 added, 63 removed, 0 changed, 81 unchanged"
