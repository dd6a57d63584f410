"""A spec reads only under its own folder (or `--allow-path DIR`): every path that leaves it, or that
could block or crash the reader, is a located error; imports form a diamond or a named cycle; specs and
CSVs may start with a UTF-8 byte-order mark."""

from __future__ import annotations

import codecs
import os
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from spec_audits.compiler import files
from spec_audits.compiler.commands.cli import check
from tests.compiler.test_malformed_specs import MALFORMED, Reported, reported

CUE = (MALFORMED / "cue_unknown_axis.spec").read_text(encoding="utf-8").split("\n", 2)[2].replace("combos 3",
                                                                                                 "combinations 3")
DATA_LINE = 'data dilemmas from "cue_data/dilemmas.csv" key id'
DILEMMAS = (MALFORMED / "cue_data" / "dilemmas.csv").read_text(encoding="utf-8")
VOCAB = 'factor color:\n  A red "red people" / "red person"\n  B blue "blue people" / "blue person"\n'
OUTSIDE_HINT = "specs read files under their own folder; pass --allow-path DIR to allow another"


def cue_spec(folder: Path, data_path: str, csv_text: str | bytes | None = DILEMMAS) -> Path:
    """The cue fixture reading its dilemmas from `data_path` (written with `csv_text` unless None)."""
    (folder / "specs").mkdir(exist_ok=True)
    spec = folder / "specs" / "cue.spec"
    spec.write_text(CUE.replace(DATA_LINE, f'data dilemmas from "{data_path}" key id'), encoding="utf-8")
    if csv_text is not None:
        target = folder / "specs" / data_path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(csv_text if isinstance(csv_text, bytes) else csv_text.encode())
    return spec


def run(folder: Path, monkeypatch: pytest.MonkeyPatch, *args: str, code: int = 1) -> Result:
    monkeypatch.chdir(folder)
    result = CliRunner().invoke(check, list(args))
    assert result.exit_code == code, result.output
    assert isinstance(result.exception, SystemExit) if code else result.exception is None, result.exception
    return result


def data_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, message: str, hint: str | None = None) -> None:
    """`spec check` reports exactly `message` at the data path of the cue spec."""
    assert reported(run(tmp_path, monkeypatch, "specs/cue.spec").output) == [
        Reported("specs/cue.spec:3:20", message, hint)]


def test_import_of_a_file_outside_the_folder_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "outside.spec").write_text(VOCAB, encoding="utf-8")
    (tmp_path / "specs").mkdir()
    (tmp_path / "specs" / "main.spec").write_text('suite s "S"\nseed 1\nimport "../outside.spec"\n', encoding="utf-8")
    result = run(tmp_path, monkeypatch, "specs/main.spec")
    assert reported(result.output) == [
        Reported("specs/main.spec:3:8", "imported file '../outside.spec' is outside the spec's folder", OUTSIDE_HINT)]
    allowed = run(tmp_path, monkeypatch, "specs/main.spec", "--allow-path", ".")
    assert [r.message for r in reported(allowed.output)] == ["the spec declares no design"]


def test_absolute_import_is_refused_without_quoting_the_file(tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    secret = tmp_path / "secret.spec"
    secret.write_text("password hunter2\n", encoding="utf-8")
    (tmp_path / "specs").mkdir()
    (tmp_path / "specs" / "main.spec").write_text(f'suite s "S"\nseed 1\nimport "{secret}"\n', encoding="utf-8")
    result = run(tmp_path, monkeypatch, "specs/main.spec")
    assert reported(result.output) == [
        Reported("specs/main.spec:3:8", f"imported file '{secret}' is outside the spec's folder", OUTSIDE_HINT)]
    assert "hunter2" not in result.output


def test_data_file_traversal_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cue_spec(tmp_path, "../../etc/passwd.csv", None)
    data_error(tmp_path, monkeypatch, "data file '../../etc/passwd.csv' is outside the spec's folder",
               OUTSIDE_HINT)


def test_symlinked_data_file_out_of_the_folder_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "private.csv").write_text(DILEMMAS, encoding="utf-8")
    cue_spec(tmp_path, "link.csv", None)
    (tmp_path / "specs" / "link.csv").symlink_to(tmp_path / "private.csv")
    data_error(tmp_path, monkeypatch, "data file 'link.csv' is outside the spec's folder", OUTSIDE_HINT)


def test_symlink_loop_is_a_located_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cue_spec(tmp_path, "loop.csv", None)
    (tmp_path / "specs" / "loop.csv").symlink_to(tmp_path / "specs" / "loop.csv")
    data_error(tmp_path, monkeypatch, "data file 'loop.csv' cannot be read (Too many levels of symbolic links)")


def test_fifo_data_file_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cue_spec(tmp_path, "pipe.csv", None)
    os.mkfifo(tmp_path / "specs" / "pipe.csv")
    data_error(tmp_path, monkeypatch, "data file 'pipe.csv' is not a regular file (a FIFO, socket or device)")


def test_over_long_name_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    name = "x" * 300 + ".csv"
    cue_spec(tmp_path, name, None)
    data_error(tmp_path, monkeypatch, f"data file '{name}' is too long (at most 255 bytes a name, 4096 a path)")


def test_nul_byte_in_a_path_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cue_spec(tmp_path, "a\\u0000b.csv", None)
    spec = tmp_path / "specs" / "cue.spec"
    spec.write_text(spec.read_text(encoding="utf-8").replace("a\\u0000b", "a\0b"), encoding="utf-8")
    data_error(tmp_path, monkeypatch, "data file 'a\\0b.csv' contains a NUL byte")


def test_diamond_imports_load_the_shared_file_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "d.spec").write_text(VOCAB, encoding="utf-8")
    (tmp_path / "b.spec").write_text('import "d.spec"\n', encoding="utf-8")
    (tmp_path / "c.spec").write_text('import "d.spec"\n', encoding="utf-8")
    (tmp_path / "a.spec").write_text('suite s "S"\nseed 1\nimport "b.spec"\nimport "c.spec"\n', encoding="utf-8")
    result = run(tmp_path, monkeypatch, "a.spec")
    assert [r.message for r in reported(result.output)] == ["the spec declares no design"]


def test_byte_order_marks_are_accepted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    spec = cue_spec(tmp_path, "cue_data/dilemmas.csv", codecs.BOM_UTF8 + DILEMMAS.encode())
    spec.write_bytes(codecs.BOM_UTF8 + spec.read_bytes())
    result = run(tmp_path, monkeypatch, "specs/cue.spec", code=0)
    assert result.output.startswith("specs/cue.spec: design 'cue' is valid")


@pytest.mark.parametrize(("csv_text", "message", "hint"), [
    (b"id,situation\xff,person,benefit\n", "data file 'bad.csv' is not UTF-8 text: byte 0xff at offset 12 "
     "cannot be decoded", "save it as UTF-8"),
    (DILEMMAS + "d3,short\n", "data file 'bad.csv': line 4 has 2 fields, the header has 4",
     "every line needs one field per column; quote fields that contain commas"),
    (DILEMMAS + 'd3,"never closed,x,option1\n', "data file 'bad.csv': line 4: unexpected end of data",
     "close every quoted field with a double quote"),
    ("id,id,person,benefit\n" + DILEMMAS.split("\n", 1)[1], "data file 'bad.csv': the header names column 'id' twice",
     None),
])
def test_malformed_csv_is_a_located_error(csv_text: str | bytes, message: str, hint: str | None,
                                          tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cue_spec(tmp_path, "bad.csv", csv_text)
    data_error(tmp_path, monkeypatch, message, hint)


def test_map_from_a_missing_column(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cue_spec(tmp_path, "cue_data/dilemmas.csv")
    spec = tmp_path / "specs" / "cue.spec"
    spec.write_text(spec.read_text(encoding="utf-8").replace("key id", "key id map who = persn"), encoding="utf-8")
    result = run(tmp_path, monkeypatch, "specs/cue.spec")
    assert reported(result.output) == [Reported(
        "specs/cue.spec:3:1", "data 'dilemmas': 'map' reads column 'persn', which data file 'cue_data/dilemmas.csv' "
        "lacks", "did you mean 'person'?")]


def test_fifo_given_as_the_spec_is_refused_without_blocking(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    os.mkfifo(tmp_path / "pipe.spec")
    result = run(tmp_path, monkeypatch, "pipe.spec")
    assert reported(result.output) == [Reported("pipe.spec:1:1", "the spec file is not a regular file (a FIFO, socket "
                                                "or device)", "check the path and try again")]


def test_a_data_file_over_the_size_limit_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(files, "MAX_FILE", 1024**2)
    cue_spec(tmp_path, "big.csv", DILEMMAS + "x" * 1024**2)
    data_error(tmp_path, monkeypatch, "data file 'big.csv' is larger than 1 MB")
