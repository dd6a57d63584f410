"""`spec verify BUNDLE`: a sound bundle passes; every tampering exits 1 naming the file (and row)."""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import shutil
import tarfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from spec_audits.contract.seeding import canonical_json
from spec_audits.runner.commands.publish.archive import write_archive
from spec_audits.runner.commands.publish.bundle import write_bundle
from spec_audits.runner.commands.publish.cli import verify
from spec_audits.runner.commands.publish.members import scan
from spec_audits.runner.commands.publish.sums import sums_text
from spec_audits.runner.commands.publish.verify import Options, check_suite
from tests.runner.publish.project import make_project

ROWS = 81


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    write_bundle(make_project(tmp_path), Path("tiny"))
    return Path("tiny")


def _verify(target: Path) -> Result:
    return CliRunner().invoke(verify, [str(target)])


def _failed(result: Result) -> list[str]:
    assert result.exit_code == 1 and isinstance(result.exception, SystemExit), result.output
    return [line for line in result.output.splitlines() if line.startswith("FAIL ")]


def _reseal(folder: Path) -> None:
    """Rewrite SHA256SUMS after an edit, as someone hiding the edit would."""
    (folder / "SHA256SUMS").write_text(sums_text(folder))


def test_a_sound_bundle_folder_and_archive_pass(folder: Path) -> None:
    result = _verify(folder)
    assert result.exit_code == 0 and result.exception is None, result.output
    assert result.stdout == f"verified tiny: {ROWS} rows, 0 puzzles: all sound\n"
    assert result.stderr.splitlines() == [
        "verify: checking SHA256SUMS (13 files)", f"verify: checking {ROWS} rows (0 puzzles to re-prove)",
        "verify: recompiling sources/tiny.spec (at most 300 s and 2048 MiB)",
        "verify: checking the sources, licences, dataset card and croissant.json"]
    write_archive(folder, Path("tiny.tar.gz"))
    assert _verify(Path("tiny.tar.gz")).stdout == f"verified tiny.tar.gz: {ROWS} rows, 0 puzzles: all sound\n"
    assert CliRunner().invoke(verify, ["--quiet", "tiny.tar.gz"]).output == (
        f"verified tiny.tar.gz: {ROWS} rows, 0 puzzles: all sound\n")


def test_a_flipped_byte_in_a_member_names_the_member(folder: Path) -> None:
    data = bytearray((folder / "sources/vocab.spec").read_bytes())
    data[3] ^= 0x01
    (folder / "sources/vocab.spec").write_bytes(bytes(data))
    failures = _failed(_verify(folder))
    assert failures[0].startswith("FAIL sources/vocab.spec: sha256 is ")
    listed = dict(line.split("  ")[::-1] for line in (folder / "SHA256SUMS").read_text().splitlines()
                  if not line.startswith("#"))
    assert failures[0].endswith(", SHA256SUMS says " + listed["sources/vocab.spec"])


@pytest.mark.parametrize("position", [0, 4, 9, 40, 2000, -9, -1])
def test_a_flipped_byte_anywhere_in_the_archive_fails(folder: Path, position: int) -> None:
    write_archive(folder, Path("tiny.tar.gz"))
    data = bytearray(Path("tiny.tar.gz").read_bytes())
    data[position] ^= 0x01
    Path("tiny.tar.gz").write_bytes(bytes(data))
    (failure,) = _failed(_verify(Path("tiny.tar.gz")))
    assert failure.startswith("FAIL tiny.tar.gz: ")
    assert failure.endswith("; the archive is damaged: download or copy it again")


def test_damage_in_the_compressed_data_names_the_member_it_falls_in(folder: Path) -> None:
    write_archive(folder, Path("tiny.tar.gz"))
    data = Path("tiny.tar.gz").read_bytes()
    failures = []
    for position in range(len(data) - 400, len(data) - 100, 25):  # within suite.jsonl, the last member
        flipped = bytearray(data)
        flipped[position] ^= 0x01
        Path("tiny.tar.gz").write_bytes(bytes(flipped))
        failures += _failed(_verify(Path("tiny.tar.gz")))
    named = ("FAIL tiny.tar.gz: the data does not match the archive's CRC: member 'tiny/suite.jsonl' not as "
             "SHA256SUMS lists; the archive is damaged: download or copy it again")
    assert failures.count(named) >= len(failures) // 2  # the others stop inflating, some naming the member


def test_a_truncated_archive_fails(folder: Path) -> None:
    write_archive(folder, Path("tiny.tar.gz"))
    data = Path("tiny.tar.gz").read_bytes()
    Path("tiny.tar.gz").write_bytes(data[: len(data) // 2])
    (failure,) = _failed(_verify(Path("tiny.tar.gz")))
    assert failure.startswith("FAIL tiny.tar.gz: the archive is truncated in or after member 'tiny/")
    assert failure.endswith("'; the archive is damaged: download or copy it again")


def test_a_missing_member_is_named(folder: Path) -> None:
    (folder / "schema.json").unlink()
    write_archive(folder, Path("tiny.tar.gz"))
    failures = _failed(_verify(Path("tiny.tar.gz")))
    assert "FAIL schema.json: missing (listed in SHA256SUMS)" in failures
    assert "FAIL schema.json: missing" in failures


def test_an_unlisted_member_is_named(folder: Path) -> None:
    (folder / "sources" / "extra.txt").write_text("smuggled")
    assert _failed(_verify(folder)) == ["FAIL sources/extra.txt: not listed in SHA256SUMS"]


def _evil_archive(path: Path, name: str, kind: bytes = tarfile.REGTYPE) -> None:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        info = tarfile.TarInfo("tiny/SHA256SUMS")
        tar.addfile(info, io.BytesIO(b""))
        evil = tarfile.TarInfo(name)
        evil.type, evil.size, evil.linkname = kind, 1 if kind == tarfile.REGTYPE else 0, "/etc/passwd"
        tar.addfile(evil, io.BytesIO(b"x"))
    with path.open("wb") as raw, gzip.GzipFile(filename="", mode="wb", fileobj=raw, compresslevel=9, mtime=0) as out:
        out.write(buffer.getvalue())  # compressed as a bundle is, so that the member check is what refuses it


@pytest.mark.parametrize(("name", "kind", "problem"), [
    ("../x", tarfile.REGTYPE, "leaves the bundle folder or is not a plain relative path"),
    ("tiny/../../x", tarfile.REGTYPE, "leaves the bundle folder or is not a plain relative path"),
    ("/tmp/x", tarfile.REGTYPE, "leaves the bundle folder or is not a plain relative path"),
    ("tiny/link", tarfile.SYMTYPE, "is not a plain file or folder"),
    ("other/x", tarfile.REGTYPE, "is outside the bundle's top folder tiny/"),
])
def test_members_outside_the_bundle_are_refused_and_nothing_is_written(
        tmp_path: Path, name: str, kind: bytes, problem: str) -> None:
    archive = tmp_path / "evil.tar.gz"
    _evil_archive(archive, name, kind)
    assert _failed(_verify(archive)) == [
        f"FAIL {archive}: member {name!r} {problem}; this is not a bundle written by `spec bundle`: do not use it"]
    assert not (tmp_path / "x").exists() and not (tmp_path.parent / "x").exists()


def test_an_edited_row_is_named_by_line_and_the_recompile_differs(folder: Path) -> None:
    lines = (folder / "suite.jsonl").read_text().splitlines(keepends=True)
    row = json.loads(lines[4])
    row["messages"][0]["content"] += " (edited)"
    lines[4] = json.dumps(row) + "\n"
    (folder / "suite.jsonl").write_text("".join(lines))
    _reseal(folder)
    failures = _failed(_verify(folder))
    assert failures[0].startswith("FAIL suite.jsonl: sha256 is ") and failures[0].endswith(", manifest.json says "
                                                                                           + _manifest_sha(folder))
    assert failures[1] == (f"FAIL suite.jsonl:5 (row {row['id']}): id does not match the row's content, which hashes "
                           f"to {_content_id(row)}: the row was edited")
    assert failures[2] == "FAIL suite.jsonl: differs from a recompile of sources/tiny.spec (first at line 5)"
    assert len(failures) == 3


def _content_id(row: dict[str, Any]) -> str:
    return hashlib.sha256(canonical_json({k: v for k, v in row.items() if k != "id"}).encode()).hexdigest()[:16]


def _manifest_sha(folder: Path, name: str = "suite.jsonl") -> str:
    return json.loads((folder / "manifest.json").read_text())["files"][name]


def test_an_edited_spec_source_fails_the_recompile(folder: Path) -> None:
    spec = folder / "sources" / "tiny.spec"
    spec.write_text(spec.read_text().replace("seed 5", "seed 6"))
    _reseal(folder)
    failures = _failed(_verify(folder))
    assert "FAIL manifest.json: differs from a recompile of sources/tiny.spec (first at line 44)" in failures


def test_an_import_edited_without_changing_the_suite_is_named_by_its_recorded_hash(folder: Path) -> None:
    vocab = folder / "sources" / "vocab.spec"
    recorded = next(s["sha256"] for s in json.loads((folder / "bundle.json").read_text())["sources"]
                    if s["path"] == "sources/vocab.spec")
    assert recorded == hashlib.sha256(Path("vocab.spec").read_bytes()).hexdigest()  # as compiled
    vocab.write_text(vocab.read_text() + "# a comment compiles to the same rows\n")
    _reseal(folder)
    edited = hashlib.sha256(vocab.read_bytes()).hexdigest()
    assert _failed(_verify(folder)) == [f"FAIL sources/vocab.spec: sha256 is {edited}, bundle.json says {recorded}"]


def _drop_vocab(sources: list[dict[str, Any]]) -> None:
    sources[:] = [s for s in sources if s["path"] != "sources/vocab.spec"]


def _add_notes(sources: list[dict[str, Any]]) -> None:
    sources.append({**sources[0], "path": "sources/data/ATTRIBUTION.md"})


def _data_as_import(sources: list[dict[str, Any]]) -> None:
    sources[0]["role"] = "import"


@pytest.mark.parametrize(("edit", "failure"), [
    (_drop_vocab, "sources/vocab.spec: read by sources/tiny.spec but not listed in bundle.json"),
    (_add_notes, "bundle.json: lists sources/data/ATTRIBUTION.md, which sources/tiny.spec does not read"),
    (_data_as_import, "sources/data/extra.csv: bundle.json says role import, sources/tiny.spec reads it as data"),
])
def test_the_sources_listed_are_the_files_the_spec_reads(
        folder: Path, edit: Callable[[list[dict[str, Any]]], None], failure: str) -> None:
    info = json.loads((folder / "bundle.json").read_text())
    edit(info["sources"])
    (folder / "bundle.json").write_text(json.dumps(info))
    _reseal(folder)
    assert _failed(_verify(folder)) == [f"FAIL {failure}"]


def test_schema_and_count_failures_are_named_by_file_and_row(folder: Path) -> None:
    lines = (folder / "suite.jsonl").read_text().splitlines(keepends=True)
    lines[1] = lines[1].replace('"samples":3', '"samples":"3"')  # pydantic reads it, the row schema refuses it
    (folder / "suite.jsonl").write_text("".join(lines))
    manifest = json.loads((folder / "manifest.json").read_text())
    manifest["trials"] += 1
    (folder / "manifest.json").write_text(json.dumps(manifest))
    failures, counts, _ = check_suite(scan(folder), Options())
    second_id = json.loads(lines[1])["id"]
    assert failures[0].startswith("suite.jsonl: sha256 is ")
    assert failures[1] == f"manifest.json: says trials={manifest['trials']}, suite.jsonl has {manifest['trials'] - 1}"
    assert failures[2:] == [f"suite.jsonl:2 (row {second_id}): schema: '3' is not of type 'integer' at samples"]
    assert counts["rows"] == ROWS


def test_rows_are_checked_against_specs_own_schema_not_the_bundles(folder: Path) -> None:
    schema = json.loads((folder / "schema.json").read_text())
    schema["properties"]["samples"]["maximum"] = 2  # every row has 3 samples
    (folder / "schema.json").write_text(json.dumps(schema))
    _reseal(folder)
    failures = _failed(_verify(folder))
    schema_sha = _manifest_sha(folder, "schema.json")
    assert failures[0].startswith("FAIL schema.json: sha256 is ")
    assert failures[0].endswith(f", manifest.json says {schema_sha}")
    assert failures[1:] == [
        "FAIL schema.json: is not the row schema of this version of spec; rows are checked against spec's own",
        "FAIL schema.json: differs from a recompile of sources/tiny.spec (first at line 1)"]


def test_failures_beyond_twenty_are_counted(folder: Path) -> None:
    lines = [json.loads(line) for line in (folder / "suite.jsonl").read_text().splitlines()]
    for row in lines:
        row["messages"][-1]["content"] += " Answer now."
    (folder / "suite.jsonl").write_text("".join(canonical_json(row) + "\n" for row in lines))
    shutil.rmtree(folder / "sources")
    failures = _failed(_verify(folder))
    missing = [f"FAIL {name}: missing (listed in SHA256SUMS)" for name in (
        "sources/LICENSE", "sources/data/ATTRIBUTION.md", "sources/data/LICENSE", "sources/data/extra.csv",
        "sources/tiny.spec", "sources/vocab.spec")]
    assert failures[:6] == missing and len(failures) == 21
    size = (folder / "suite.jsonl").stat().st_size
    assert failures[6].startswith(f"FAIL suite.jsonl: {size:,} bytes, more than the ")  # larger than listed: not read
    assert failures[7].startswith("FAIL suite.jsonl: sha256 is ")  # against the manifest
    # 6 missing, suite.jsonl's size (SHA256SUMS) and hash (the manifest), an id per row, the missing spec
    assert failures[-1] == f"FAIL ... and {6 + 2 + ROWS + 1 - 20} more"


def test_a_row_the_contract_refuses_is_one_failure_among_the_others(folder: Path) -> None:
    lines = (folder / "suite.jsonl").read_text().splitlines(keepends=True)
    lines[1] = lines[1].replace('"samples":3', '"samples":0')
    (folder / "suite.jsonl").write_text("".join(lines))
    failures = _failed(_verify(folder))
    assert failures[0].startswith("FAIL suite.jsonl: sha256 is ")
    assert failures[1] == (f"FAIL {folder}/suite.jsonl:2: samples: Input should be greater than or equal to 1; the "
                           "suite is damaged or was edited by hand: compile it again with `spec compile`")
    assert failures[2] == "FAIL suite.jsonl: differs from a recompile of sources/tiny.spec (first at line 2)"
