"""`spec bundle`: what a bundle holds, its computed licence, byte-identical archives, and the refusals."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest
from click.testing import CliRunner

from spec_audits.compiler.dispatch.build import compile_file
from spec_audits.runner.commands.publish.cli import bundle, verify
from spec_audits.runner.commands.publish.sources import identify
from spec_audits.runner.commands.publish.sums import HEADER
from tests.runner.publish.project import CC_BY, make_project
from tests.support import ROOT, shipped_suite


@pytest.fixture
def suite(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return make_project(tmp_path)


def _members(archive: Path) -> list[str]:
    with tarfile.open(archive) as tar:
        return tar.getnames()


def test_archive_holds_the_suite_sources_licences_card_and_sums(suite: Path) -> None:
    result = CliRunner().invoke(bundle, [str(suite), "-o", "tiny.tar.gz"])
    assert result.exit_code == 0 and result.exception is None, result.output
    assert result.output == "bundled golden_oneorder (CC-BY-SA-4.0, 3 sources) -> tiny.tar.gz\n"
    assert _members(Path("tiny.tar.gz")) == [f"tiny/{name}" for name in (
        "README.md", "SHA256SUMS", "bundle.json", "croissant.json", "manifest.json", "schema.json",
        "sources/LICENSE", "sources/data/ATTRIBUTION.md", "sources/data/LICENSE", "sources/data/extra.csv",
        "sources/tiny.spec", "sources/vocab.spec", "suite.jsonl")]
    with tarfile.open("tiny.tar.gz") as tar:
        assert {(m.mtime, m.uid, m.gid, m.uname, m.gname, m.mode) for m in tar} == {(0, 0, 0, "", "", 0o644)}


def test_the_folder_form_records_each_source_with_its_licence_and_attribution(suite: Path) -> None:
    assert CliRunner().invoke(bundle, [str(suite), "-o", "tiny"]).exit_code == 0
    info = json.loads(Path("tiny/bundle.json").read_text())
    assert info["license"] == "CC-BY-SA-4.0" and info["compile_dir"] == "sources" and info["spec"] == "tiny.spec"
    data_sha256 = hashlib.sha256(b"id,text\nr1,hello\n").hexdigest()
    assert info["sources"][0] == {"path": "sources/data/extra.csv", "role": "data", "sha256": data_sha256,
                                  "license": "CC-BY-SA-4.0", "license_file": "sources/data/LICENSE",
                                  "attribution": "sources/data/ATTRIBUTION.md"}
    assert [(s["path"], s["role"], s["license"]) for s in info["sources"][1:]] == [
        ("sources/tiny.spec", "spec", "MIT"), ("sources/vocab.spec", "import", "MIT")]
    card = Path("tiny/README.md").read_text()
    assert card.startswith("---\nlicense: cc-by-sa-4.0\npretty_name: \"One display order\"\n")
    assert "size_categories:\n- n<1K\n" in card and "    path: suite.jsonl\n---\n" in card
    assert ("| `sources/data/extra.csv` | data | CC-BY-SA-4.0 | `sources/data/LICENSE` | "
            f"`sources/data/ATTRIBUTION.md` | `{data_sha256}` |\n") in card
    sums = Path("tiny/SHA256SUMS").read_text().splitlines()
    assert sums[0] == HEADER.rstrip("\n") and len(sums) == 1 + 2 * 12  # the sizes, then the hashes
    names = [line.split("  ")[1] for line in sums[13:]]
    assert names[:2] == ["README.md", "bundle.json"] and [line.split("  ")[1] for line in sums[1:13]] == names
    assert sums[1:13] == [f"# size {Path('tiny', name).stat().st_size}  {name}" for name in names]
    assert sums[13:] == [f"{hashlib.sha256(Path('tiny', name).read_bytes()).hexdigest()}  {name}" for name in names]


def test_a_cc_by_source_with_mit_sources_makes_a_cc_by_bundle(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    suite = make_project(tmp_path, CC_BY)
    assert CliRunner().invoke(bundle, [str(suite), "-o", "b"]).exit_code == 0
    assert json.loads(Path("b/bundle.json").read_text())["license"] == "CC-BY-4.0"


def test_licence_texts_are_identified_or_not_at_all() -> None:
    assert identify((ROOT / "specs" / "LICENSE").read_text()) == "MIT"
    assert identify("Attribution-ShareAlike 4.0 International\n...") == "CC-BY-SA-4.0"
    assert identify("Attribution-NonCommercial 4.0 International\n...") is None
    assert identify("All rights reserved.") is None


def test_unlicensed_data_is_refused_unless_allowed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    suite = make_project(tmp_path, data_licence=None)
    (tmp_path / "LICENSE").unlink()
    result = CliRunner().invoke(bundle, [str(suite), "-o", "b.tar.gz"])
    assert result.exit_code == 1 and result.exception is not None
    assert result.output == (
        f"Error: {tmp_path}/data/extra.csv: no licence file covers this file; put a licence file (LICENSE, "
        "LICENSE.txt) with one of CC0-1.0, MIT, CC-BY-4.0, CC-BY-SA-4.0 next to it or in a folder above it, or "
        "bundle anyway with --allow-unlicensed\n")
    assert not Path("b.tar.gz").exists()
    allowed = CliRunner().invoke(bundle, [str(suite), "-o", "b", "--allow-unlicensed"])
    assert allowed.exit_code == 0, allowed.output
    assert json.loads(Path("b/bundle.json").read_text())["license"] == "other"
    assert Path("b/README.md").read_text().startswith("---\nlicense: other\n")


def test_an_unrecognised_licence_is_refused(suite: Path) -> None:
    Path("data/LICENSE").write_text("Attribution-NonCommercial 4.0 International\n")
    result = CliRunner().invoke(bundle, [str(suite), "-o", "b"])
    assert result.exit_code == 1
    assert "data/LICENSE: not a licence this tool recognises (one of CC0-1.0, MIT, CC-BY-4.0, CC-BY-SA-4.0)" in (
        result.output)


def test_a_spec_edited_after_compiling_is_refused(suite: Path) -> None:
    Path("tiny.spec").write_text(Path("tiny.spec").read_text() + "\n# edited\n")
    result = CliRunner().invoke(bundle, [str(suite), "-o", "b"])
    assert result.exit_code == 1
    assert result.output == ("Error: tiny.spec: changed since out/tiny/manifest.json was compiled (spec_sha256 "
                             "differs); compile the suite again with `spec compile`, then bundle it\n")


def test_data_edited_after_compiling_is_refused_by_the_recompile(suite: Path) -> None:
    Path("vocab.spec").write_text('influence third append "Think hard of {{ target.plural }}."\n')
    result = CliRunner().invoke(bundle, [str(suite), "-o", "b"])
    assert result.exit_code == 1
    assert result.output.startswith("Error: out/tiny: the spec does not compile to this suite any more: "
                                    "suite.jsonl: differs from a recompile of sources/tiny.spec (first at line ")
    assert not Path("b").exists()


def test_a_folder_that_is_not_a_bundle_is_not_replaced(suite: Path) -> None:
    Path("keep").mkdir()
    Path("keep/notes.txt").write_text("mine")
    result = CliRunner().invoke(bundle, [str(suite), "-o", "keep"])
    assert result.exit_code == 1
    assert result.output == "Error: keep: exists and is not a bundle; give -o a new folder or a NAME.tar.gz\n"
    assert Path("keep/notes.txt").read_text() == "mine"


def _bundle_in_subprocess(suite: Path, out: Path, hash_seed: str) -> bytes:
    code = "import sys; from spec_audits.cli import main; main(sys.argv[1:])"
    env = {**os.environ, "PYTHONHASHSEED": hash_seed, "PYTHONPATH": str(ROOT)}
    subprocess.run([sys.executable, "-c", code, "bundle", str(suite), "-o", str(out)], cwd=ROOT, env=env,
                   check=True, capture_output=True)
    return out.read_bytes()


@pytest.mark.slow
def test_a_shipped_suite_bundles_byte_identical_across_runs_and_hash_seeds(tmp_path: Path) -> None:
    suite = shipped_suite("triage")
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    first = _bundle_in_subprocess(suite, tmp_path / "a" / "triage.tar.gz", "0")
    assert first == _bundle_in_subprocess(suite, tmp_path / "b" / "triage.tar.gz", "12345")
    assert first[:10] == b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x02\xff"  # no file name, mtime 0


def test_data_outside_the_compile_folder_keeps_its_place_and_recompiles(tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    project, shared = tmp_path / "project", tmp_path / "shared"
    project.mkdir()
    monkeypatch.chdir(project)
    suite = make_project(project, CC_BY)  # compiled once with data/extra.csv, then moved out of the project
    shared.mkdir()
    (project / "data").rename(shared / "data")
    spec = Path("tiny.spec").read_text().replace('"data/extra.csv"', '"../shared/data/extra.csv"')
    Path("tiny.spec").write_text(spec)
    compile_file(Path("tiny.spec"), suite, allowed=(shared,))  # spec compile --allow-path ../shared
    assert CliRunner().invoke(bundle, [str(suite), "-o", "b"]).exit_code == 0
    info = json.loads(Path("b/bundle.json").read_text())
    assert info["compile_dir"] == "sources/project" and info["spec"] == "tiny.spec"
    data = next(s for s in info["sources"] if s["role"] == "data")
    assert data["path"] == "sources/shared/data/extra.csv" and data["license_file"] == "sources/shared/data/LICENSE"
    result = CliRunner().invoke(verify, ["b"])
    assert result.exit_code == 0, result.output
