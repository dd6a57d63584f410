"""`spec verify` (and `spec diff`) on a stranger's hostile bundle: no network, nothing read outside the
bundle, archives refused before they are read, the recompile held to a budget, temporary files removed
on a signal, provenance and row ids recomputed. One test per class of issue 19 (items 2 and 3)."""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import re
import resource
import signal
import subprocess
import sys
import tarfile
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from spec_audits.contract.seeding import canonical_json
from spec_audits.runner.commands.publish import recompile as recompile_module
from spec_audits.runner.commands.publish.archive import write_archive
from spec_audits.runner.commands.publish.cli import diff, verify
from spec_audits.runner.commands.publish.recompile import Limits, recompile
from tests.runner.publish.hostile import (
    copy_bundle,
    counting_server,
    edit_json,
    gnu_sparse_member,
    member,
    reseal,
    silent_server,
    sound_bundle,
    sums_member,
    write_raw_tar_gz,
    write_tar_gz,
)

ROWS = 81
CLI = "import sys\nfrom spec_audits.cli import main\nmain(sys.argv[1:])\n"
NOT_A_BUNDLE = "; this is not a bundle written by `spec bundle`: do not use it"


@pytest.fixture(scope="session")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return sound_bundle(tmp_path_factory.mktemp("built"))


@pytest.fixture
def folder(built: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of the sound bundle in tmp_path (the working folder), with temporary files kept in tmp_path/tmp."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "tmp").mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    (tmp_path / "outside.txt").write_text("a file of the verifying user's, outside the bundle\n")
    return copy_bundle(built, tmp_path / "tiny")


def _verify(*args: Any) -> Result:
    return CliRunner().invoke(verify, ["--quiet", *map(str, args)])


def _failed(result: Result) -> list[str]:
    assert result.exit_code == 1 and isinstance(result.exception, SystemExit), result.output
    return [line for line in result.output.splitlines() if line.startswith("FAIL ")]


def _child(args: list[str], cwd: Path, code: str = CLI, **env: str) -> subprocess.CompletedProcess[str]:
    """`spec ARGS` in a child Python running `code`; a hang fails the test instead of stalling it."""
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=600, cwd=cwd,
                          env={**os.environ, **env}, check=False)


def _no_temporary_files(tmp_path: Path) -> bool:
    return not any((tmp_path / "tmp").iterdir())


# no network


def test_a_ref_in_schema_json_is_never_fetched_or_opened(folder: Path, tmp_path: Path) -> None:
    with counting_server() as (url, hits), silent_server() as (silent, connections):
        edit_json(folder / "schema.json", lambda schema: schema["properties"].update({
            "samples": {"$ref": f"{url}/samples.json"}, "cell": {"$ref": f"{silent}/cell.json"},
            "decode": {"$ref": (tmp_path / "outside.txt").as_uri()}}))
        reseal(folder)
        done = _child(["verify", "--quiet", "tiny"], tmp_path)
        assert hits == [] and connections() == 0
    assert done.returncode == 1, done.stderr
    failures = [line for line in done.stderr.splitlines() if line.startswith("FAIL ")]
    assert failures[1] == \
        "FAIL schema.json: is not the row schema of this version of spec; rows are checked against spec's own"
    assert re.fullmatch(r"FAIL schema\.json: differs from a recompile of sources/tiny\.spec \(first at line \d+\)",
                        failures[2]) and len(failures) == 3
    assert done.stdout == f"verified tiny: {ROWS} rows, 0 puzzles: 3 failures\n"


NO_SOCKETS = """import socket, sys
class NoSocket(socket.socket):
    def __init__(self, *args, **kwargs):
        print("SOCKET ATTEMPT", file=sys.stderr)
        raise OSError("sockets are disabled in this test")
def refuse(*args, **kwargs):
    print("SOCKET ATTEMPT", file=sys.stderr)
    raise OSError("the network is disabled in this test")
socket.socket, socket.create_connection, socket.getaddrinfo = NoSocket, refuse, refuse
""" + CLI


def test_verify_passes_a_sound_bundle_with_sockets_disabled(folder: Path, tmp_path: Path) -> None:
    write_archive(folder, tmp_path / "tiny.tar.gz")
    done = _child(["verify", "tiny.tar.gz"], tmp_path, NO_SOCKETS)
    assert done.returncode == 0, done.stderr
    assert done.stdout == f"verified tiny.tar.gz: {ROWS} rows, 0 puzzles: all sound\n"
    assert "SOCKET ATTEMPT" not in done.stderr and "recompiling sources/tiny.spec" in done.stderr


# nothing read outside the bundle


def _sums_line(line: str) -> Callable[[Path], None]:
    def edit(folder: Path) -> None:
        with (folder / "SHA256SUMS").open("a") as sums:
            sums.write(line)
    return edit


def _manifest_file(name: str) -> Callable[[Path], None]:
    return lambda folder: edit_json(folder / "manifest.json", lambda data: data["files"].update({name: "0" * 64}))


def _bundle_info(change: Callable[[dict[str, Any]], None]) -> Callable[[Path], None]:
    return lambda folder: edit_json(folder / "bundle.json", change)


LEAVES = "leaves the bundle folder or is not a plain relative path"


@pytest.mark.parametrize(("edit", "failure"), [
    (_manifest_file("../outside.txt"), f"manifest.json: files names '../outside.txt', which {LEAVES}"),
    (_manifest_file("/proc/self/environ"), f"manifest.json: files names '/proc/self/environ', which {LEAVES}"),
    (_sums_line(f"{'0' * 64}  ../outside.txt\n"), f"SHA256SUMS:26: path '../outside.txt' {LEAVES}"),
    (_sums_line("# size 9  /etc/passwd\n"), f"SHA256SUMS:26: path '/etc/passwd' {LEAVES}"),
    (_bundle_info(lambda info: info.update(compile_dir="sources/../..")),
     "bundle.json: compile_dir or spec leaves the bundle's sources/ folder"),
    (_bundle_info(lambda info: info.update(spec="/etc/passwd")),
     "bundle.json: compile_dir or spec leaves the bundle's sources/ folder"),
    (_bundle_info(lambda info: info["sources"][0].update(license_file="../outside.txt")),
     'sources/data/extra.csv: bundle.json says license_file "../outside.txt", the bundle\'s licence files give '
     '"sources/data/LICENSE"'),
])
def test_paths_a_bundle_names_are_looked_up_inside_it_never_opened(
        folder: Path, tmp_path: Path, edit: Callable[[Path], None], failure: str) -> None:
    edit(folder)
    result = _verify(folder)
    assert f"FAIL {failure}" in _failed(result)
    for outside in (tmp_path / "outside.txt", Path("/etc/passwd")):
        assert hashlib.sha256(outside.read_bytes()).hexdigest() not in result.output


def _symlink(folder: Path, tmp_path: Path) -> Path:
    (folder / "sources/data/extra.csv").unlink()
    (folder / "sources/data/extra.csv").symlink_to(tmp_path / "outside.txt")
    return folder / "sources/data/extra.csv"


def _fifo(folder: Path, tmp_path: Path) -> Path:
    os.mkfifo(folder / "sources/pipe")  # reading it would block verify for ever
    return folder / "sources/pipe"


def _escape(folder: Path, tmp_path: Path) -> Path:
    (folder / "sources/\x1b[2Jall sound").write_text("a name that clears the terminal\n")
    return folder / "sources/\x1b[2Jall sound"


@pytest.mark.parametrize(("make", "problem"), [
    (_symlink, "is a symbolic link; a bundle holds plain files only"),
    (_fifo, "is not a plain file or folder"),
    (_escape, "holds a control character or a backslash"),
])
def test_links_and_special_files_in_a_bundle_folder_are_refused_unread(
        folder: Path, tmp_path: Path, make: Callable[[Path, Path], Path], problem: str) -> None:
    path = make(folder, tmp_path)
    result = _verify(folder)
    shown = str(path).replace("\x1b", "\\x1b")
    assert _failed(result) == [f"FAIL {shown}: {problem}{NOT_A_BUNDLE}"]
    assert "\x1b" not in result.output


FAKE = "verified tiny: 81 rows, 0 puzzles: all sound"


@pytest.mark.parametrize("place", ["file name", "bundle.json"])
def test_a_newline_in_a_strangers_name_cannot_fake_a_verdict_line(folder: Path, place: str) -> None:
    if place == "file name":
        (folder / f"sources/a\n{FAKE}\r").write_text("x")
    else:
        edit_json(folder / "bundle.json", lambda info: info["sources"][0].update(path=f"a\n{FAKE}\r"))
        reseal(folder)
    result = _verify(folder)
    assert "\r" not in result.output
    assert [line for line in result.output.splitlines() if line.startswith("verified")] == [
        f"verified {folder}: {0 if place == 'file name' else ROWS} rows, 0 puzzles: {len(_failed(result))} failures"]
    assert any(f"a\\n{FAKE}\\r" in line for line in _failed(result))


# archives: caps, sparse files, duplicates, promises


def _sums_then(*members: tuple[tarfile.TarInfo, bytes], sizes: dict[str, int] | None = None) -> list[Any]:
    listed = {info.name.partition("/")[2]: data for info, data in members if info.isfile()}
    return [sums_member("tiny", listed, sizes), *members]


ARCHIVES: list[tuple[str, list[Any], list[str], str]] = [
    ("pax sparse", [member("tiny/big", pax_headers={"GNU.sparse.major": "1", "GNU.sparse.minor": "0",
                                                    "GNU.sparse.name": "tiny/big", "GNU.sparse.realsize": str(2**40)})],
     [], "the archive holds a sparse file; a bundle holds plain files only"),
    ("promise", _sums_then(member("tiny/suite.jsonl", b"\0" * 5_000_000), sizes={"suite.jsonl": 100}), [],
     "member 'tiny/suite.jsonl' is 5,000,000 bytes, more than the 100 that SHA256SUMS promises"),
    ("unpromised", [member("tiny/README.md", b"\0" * (17 << 20))], [],
     "member 'tiny/README.md' is 17,825,792 bytes, more than the 16,777,216 a member may have before SHA256SUMS "
     "lists its size"),
    ("bytes", _sums_then(member("tiny/suite.jsonl", b"\0" * 3_000_000)), ["--max-bytes", "1000000"],
     "the archive inflates to more than 1,000,000 bytes (--max-bytes) in or after member 'tiny/suite.jsonl'"),
    ("files", _sums_then(*(member(f"tiny/{n}", b"x") for n in "abcde")), ["--max-files", "3"],
     "the archive holds more than 3 files and folders (--max-files) in or after member 'tiny/c'"),
    ("duplicate", _sums_then(member("tiny/a", b"x"), member("tiny/a", b"x")), [],
     "member 'tiny/a' appears twice in the archive"),
    ("below a file", _sums_then(member("tiny/a", b"x"), member("tiny/a/b", b"y")), [],
     "member 'tiny/a/b' lies below member 'tiny/a', which is a file"),
    ("hard link", _sums_then(member("tiny/a", b"x"), member("tiny/b", type=tarfile.LNKTYPE, linkname="tiny/a")), [],
     "member 'tiny/b' is not a plain file or folder"),
    ("unlisted", [*_sums_then(member("tiny/a", b"x")), member("tiny/b", b"y")], [],
     "member 'tiny/b' is not listed in SHA256SUMS"),
    ("header", [member("tiny/a", b"x", pax_headers={"comment": "x" * 2_000_000})], [],
     "the archive holds a 2,000,017-byte extended tar header"),
]


@pytest.mark.parametrize(("members", "options", "problem"), [case[1:] for case in ARCHIVES],
                         ids=[case[0] for case in ARCHIVES])
def test_hostile_archives_are_refused_before_their_members_are_read(
        folder: Path, tmp_path: Path, members: list[Any], options: list[str], problem: str) -> None:
    write_tar_gz(tmp_path / "evil.tar.gz", members)
    assert _failed(_verify(*options, "evil.tar.gz")) == [f"FAIL evil.tar.gz: {problem}{NOT_A_BUNDLE}"]
    assert _no_temporary_files(tmp_path)


def test_a_sparse_terabyte_in_a_few_bytes_is_refused_unread(folder: Path, tmp_path: Path) -> None:
    write_raw_tar_gz(tmp_path / "sparse.tar.gz", gnu_sparse_member("tiny/big", 2**40))
    assert (tmp_path / "sparse.tar.gz").stat().st_size < 200
    assert _failed(_verify("sparse.tar.gz")) == [
        f"FAIL sparse.tar.gz: the archive holds a sparse file; a bundle holds plain files only{NOT_A_BUNDLE}"]
    assert _no_temporary_files(tmp_path)


def test_an_archive_with_two_suite_jsonl_members_is_refused(folder: Path, tmp_path: Path) -> None:
    write_archive(folder, tmp_path / "tiny.tar.gz")
    with tarfile.open(tmp_path / "tiny.tar.gz") as tar:
        members = [(info, tar.extractfile(info).read()) for info in tar]  # type: ignore[union-attr]
    suite = next(data for info, data in members if info.name == "tiny/suite.jsonl")
    write_tar_gz(tmp_path / "two.tar.gz", [*members, member("tiny/suite.jsonl", suite[: len(suite) // 2])])
    assert _failed(_verify("two.tar.gz")) == [
        f"FAIL two.tar.gz: member 'tiny/suite.jsonl' appears twice in the archive{NOT_A_BUNDLE}"]


@pytest.mark.parametrize("zero_blocks", [1, 2])
def test_members_hidden_after_the_end_of_the_tar_data_are_refused(folder: Path, tmp_path: Path,
                                                                  zero_blocks: int) -> None:
    """`tar -i` (and tarfile with ignore_zeros) reads on past the end-of-archive blocks, where a second
    suite.jsonl would replace the verified one: nothing but zeros may follow the last member."""
    write_archive(folder, tmp_path / "tiny.tar.gz")
    with tarfile.open(tmp_path / "tiny.tar.gz") as tar:
        list(tar)
        end = tar.offset  # where the end-of-archive blocks start
    data = (tmp_path / "tiny.tar.gz").read_bytes()
    hidden = member("tiny/suite.jsonl", b'{"id": "forged"}\n')
    write_tar_gz(tmp_path / "extra.tar.gz", [hidden])
    tail = gzip.decompress((tmp_path / "extra.tar.gz").read_bytes())
    write_raw_tar_gz(tmp_path / "hidden.tar.gz", gzip.decompress(data)[:end] + b"\0" * 512 * zero_blocks + tail)
    with tarfile.open(tmp_path / "hidden.tar.gz", ignore_zeros=True) as tar:  # what `tar -i` would take
        assert [info.name for info in tar].count("tiny/suite.jsonl") == 2
    assert _failed(_verify("hidden.tar.gz")) == [
        f"FAIL hidden.tar.gz: the archive holds data after the end of its tar data (byte {end:,})"
        f"{NOT_A_BUNDLE}"]


# the recompile: what it may read, its environment, its budget


def test_a_bundled_spec_cannot_read_a_file_outside_the_bundle(folder: Path, tmp_path: Path) -> None:
    (tmp_path / "outside.spec").write_text('influence third append "a secret of the user\'s {{ target.plural }}."\n')
    spec = folder / "sources/tiny.spec"
    spec.write_text(spec.read_text().replace('import "vocab.spec"', 'import "../../outside.spec"'))
    reseal(folder)
    result = _verify(folder)
    assert _failed(result) == ["FAIL sources/tiny.spec: does not compile:"]
    assert "imported file '../../outside.spec' is outside the spec's folder" in result.output
    assert "secret" not in result.output


def test_the_compilers_diagnostics_follow_their_failure_indented(folder: Path) -> None:
    """A spec line quoted in a diagnostic (here one that reads as a verdict) is printed indented below its
    failure: every line of verify's output is a failure, a line of one, or the verdict."""
    spec = folder / "sources/tiny.spec"
    spec.write_text(f"{spec.read_text()}\n{FAKE}\n")
    reseal(folder)
    result = _verify(folder)
    assert "FAIL sources/tiny.spec: does not compile:" in _failed(result)
    assert any(line.startswith("    ") and FAKE in line for line in result.output.splitlines())
    assert [line for line in result.output.splitlines() if not line.startswith(("FAIL ", "    "))] == [
        f"verified {folder}: {ROWS} rows, 0 puzzles: {len(_failed(result))} failures"]


def test_the_recompile_gets_none_of_the_users_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-the-users-key")
    monkeypatch.setenv("HOME", "/home/the-user")
    env = recompile_module._environment(tmp_path)
    assert "sk-the-users-key" not in env.values() and env["HOME"] == env["TMPDIR"] == str(tmp_path)
    assert set(env) <= {"PATH", "LANG", "LC_ALL", "PYTHONPATH", "HOME", "TMPDIR", "OPENBLAS_NUM_THREADS",
                        "OMP_NUM_THREADS", "PYTHONDONTWRITEBYTECODE"}



def test_a_spec_that_compiles_far_more_than_its_suite_is_stopped_by_the_budget(folder: Path, tmp_path: Path) -> None:
    spec = folder / "sources/tiny.spec"
    spec.write_text(spec.read_text().replace("n_A in 1..3, n_B in 1..3", "n_A in 1..400, n_B in 1..400"))
    reseal(folder)
    result = _verify(folder)
    assert "FAIL sources/tiny.spec: does not compile:" in _failed(result)
    assert "the suite would have 1,440,000 rows, over the budget of 81" in result.output
    assert _no_temporary_files(tmp_path)


def _limits(**changes: Any) -> Limits:
    return Limits(**{"seconds": 300.0, "memory_mib": 2048, "rows": ROWS, "trials": 3 * ROWS,
                     "file_bytes": 1 << 20, **changes})


@pytest.mark.parametrize(("limits", "startup", "failure"), [
    (_limits(seconds=0.001), 0.0, "the recompile did not finish within 0.001 s, its time budget; pass --max-seconds "
                                  "to allow more"),
    (_limits(memory_mib=40), 60.0,
     "the recompile ran out of its 40 MiB memory budget; pass --max-memory to allow more"),
])
def test_the_recompile_is_held_to_its_time_and_memory(folder: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                      limits: Limits, startup: float, failure: str) -> None:
    monkeypatch.setattr(recompile_module, "STARTUP_SECONDS", startup)
    root = folder.resolve()
    done = recompile(root, root / "sources", Path("tiny.spec"), tmp_path / "tmp" / "suite", limits, "tiny.spec")
    assert done.failure == f"tiny.spec: {failure}"


def test_a_write_past_the_file_size_limit_fails_instead_of_killing_the_child(tmp_path: Path) -> None:
    code = ("from spec_audits.runner.commands.publish.recompile import Limits, _limit\n"
            "_limit(Limits(seconds=60, memory_mib=2048, rows=1, trials=1, file_bytes=1000))\n"
            "try:\n    with open('big', 'wb') as big:\n        big.write(b'x' * 5000)\n"
            "except OSError as err:\n    print(err.errno)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600, cwd=tmp_path,
                          check=False)
    assert (done.returncode, done.stdout) == (0, "27\n")  # EFBIG, where SIGXFSZ would have killed it
    assert (tmp_path / "big").stat().st_size <= 1000


LOWER_MEMORY = 1536 * 1024**2  # below --max-memory's default of 2048 MiB


def _inherit_a_lower_memory_limit() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (LOWER_MEMORY, LOWER_MEMORY))


def test_the_recompile_keeps_a_lower_memory_limit_it_inherited(folder: Path, tmp_path: Path) -> None:
    code = ("import resource\nfrom spec_audits.runner.commands.publish.recompile import Limits, _limit\n"
            "_limit(Limits(seconds=60, memory_mib=2048, rows=1, trials=1, file_bytes=1000))\n"
            "print(resource.getrlimit(resource.RLIMIT_AS))\n")
    limited = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600,
                             preexec_fn=_inherit_a_lower_memory_limit, check=False)
    assert (limited.returncode, limited.stdout) == (0, f"({LOWER_MEMORY}, {LOWER_MEMORY})\n"), limited.stderr
    write_archive(folder, tmp_path / "tiny.tar.gz")
    done = subprocess.run([sys.executable, "-c", CLI, "verify", "--quiet", "tiny.tar.gz"], capture_output=True,
                          text=True, timeout=600, cwd=tmp_path, preexec_fn=_inherit_a_lower_memory_limit, check=False)
    assert (done.returncode, done.stdout) == (0, f"verified tiny.tar.gz: {ROWS} rows, 0 puzzles: all sound\n"), \
        done.stderr


# temporary files on a signal

STOPPED = """import os, signal, sys, time
signal.signal(signal.SIGINT, signal.default_int_handler)  # Ctrl-C as in a terminal, whatever the test inherited
import spec_audits.runner.commands.publish.verify as checks
def stopped(*args, **kwargs):
    os.kill(os.getpid(), signal.{signal})
    time.sleep(600)
checks.{point} = stopped
""" + CLI


@pytest.mark.parametrize(("sig", "point", "status"), [
    ("SIGTERM", "check_suite", 128 + signal.SIGTERM), ("SIGINT", "check_suite", 1),
    ("SIGTERM", "recompile", 128 + signal.SIGTERM)])
def test_a_signal_removes_the_extraction_and_recompile_folders(
        folder: Path, tmp_path: Path, sig: str, point: str, status: int) -> None:
    write_archive(folder, tmp_path / "tiny.tar.gz")
    done = _child(["verify", "tiny.tar.gz"], tmp_path, STOPPED.format(signal=sig, point=point),
                  TMPDIR=str(tmp_path / "tmp"))
    assert done.returncode == status, done.stderr
    assert "Traceback" not in done.stderr
    assert _no_temporary_files(tmp_path)


# provenance


def _licence(value: str) -> Callable[[Path], None]:
    """bundle.json, the card and every source made to say `value`, consistently, as a forger would."""
    def edit(folder: Path) -> None:
        def change(info: dict[str, Any]) -> None:
            info["license"] = value
            for entry in info["sources"]:
                entry["license"] = value
        edit_json(folder / "bundle.json", change)
        card = folder / "README.md"
        card.write_text(card.read_text().replace("CC-BY-SA-4.0", value).replace("cc-by-sa-4.0", value.lower()))
    return edit


def _write(name: str, text: str) -> Callable[[Path], None]:
    return lambda folder: (folder / name).write_text(text)


CC0 = "CC0 1.0 Universal\n\n(legal code abridged for the tests)\n"


@pytest.mark.parametrize(("edit", "failures"), [
    (_bundle_info(lambda info: info.update(sources="garbage")),
     ["bundle.json: sources: Input should be a valid list"]),
    (_bundle_info(lambda info: info["sources"].append({"path": 7})),
     ["bundle.json: sources.3.path: Input should be a valid string (and 5 more)"]),
    (_licence("CC0-1.0"), [
        'sources/data/extra.csv: bundle.json says license "CC0-1.0", the bundle\'s licence files give "CC-BY-SA-4.0"',
        'sources/tiny.spec: bundle.json says license "CC0-1.0", the bundle\'s licence files give "MIT"',
        'sources/vocab.spec: bundle.json says license "CC0-1.0", the bundle\'s licence files give "MIT"',
        "bundle.json: says license CC0-1.0, its sources' licence files make it CC-BY-SA-4.0"]),
    (_write("sources/data/LICENSE", CC0), [
        'sources/data/extra.csv: bundle.json says license "CC-BY-SA-4.0", the bundle\'s licence files give "CC0-1.0"',
        "bundle.json: says license CC-BY-SA-4.0, its sources' licence files make it MIT",
        'croissant.json: license is not what the suite and its sources give ("https://spdx.org/licenses/MIT.html")']),
    (_write("croissant.json", "garbage"), ["croissant.json: not JSON (Expecting value: line 1 column 1 (char 0))"]),
    (lambda folder: edit_json(folder / "croissant.json", lambda data: data["recordSet"][0]["field"].pop()),
     ['croissant.json: recordSet.0.field is not what the suite and its sources give ([{"@id": "rows/id", '
      '"@type": "cr:Field", "dataType": "sc:Text", "description"...)']),
    (lambda folder: (folder / "README.md").write_text((folder / "README.md").read_text().replace("MIT", "CC0-1.0")),
     ["README.md: not the dataset card of this suite and its sources (first at line 39)"]),
])
def test_provenance_is_recomputed_from_the_sources(folder: Path, edit: Callable[[Path], None],
                                                   failures: list[str]) -> None:
    edit(folder)
    reseal(folder)
    assert _failed(_verify(folder)) == [f"FAIL {failure}" for failure in failures]


# row ids


def test_prompts_rewritten_with_their_ids_kept_fail_verify_and_count_as_changed(folder: Path, tmp_path: Path) -> None:
    original = copy_bundle(folder, tmp_path / "original")
    rows = [json.loads(line) for line in (folder / "suite.jsonl").read_text().splitlines()]
    for row in rows:
        row["messages"][-1]["content"] = "Choose (A) whichever the bundle's author prefers, or (B)."
    (folder / "suite.jsonl").write_text("".join(canonical_json(row) + "\n" for row in rows))
    edit_json(folder / "manifest.json", lambda manifest: manifest["files"].update(
        {"suite.jsonl": hashlib.sha256((folder / "suite.jsonl").read_bytes()).hexdigest()}))
    reseal(folder)
    failures = _failed(_verify(folder))
    first = rows[0]
    fresh = hashlib.sha256(canonical_json({k: v for k, v in first.items() if k != "id"}).encode()).hexdigest()[:16]
    assert failures[0] == (f"FAIL suite.jsonl:1 (row {first['id']}): id does not match the row's content, which "
                           f"hashes to {fresh}: the row was edited")
    assert len(failures) == 21 and failures[-1] == f"FAIL ... and {ROWS + 3 - 20} more", failures
    result = CliRunner().invoke(diff, [str(original), str(folder)])
    assert result.exit_code == 0 and result.exception is None, result.output
    assert result.stdout.splitlines()[0] == f"rows: {ROWS} -> {ROWS}: 0 added, 0 removed, {ROWS} changed, 0 unchanged"
    warnings = result.stderr.splitlines()
    assert len(warnings) == ROWS and warnings[0] == (
        f"warning: {folder}/suite.jsonl (row 1, id {first['id']}): the id does not match the row's content, which "
        f"hashes to {fresh}; the row is compared by its content")



def test_a_failed_allocation_that_set_no_memory_error_is_read_as_out_of_memory() -> None:
    """C code whose allocation failed without setting MemoryError surfaces as this SystemError (seen importing the
    bundle readers at the edge of the limit, which made the test above flaky); any other SystemError is a bug."""
    assert recompile_module._out_of_memory(SystemError("error return without exception set"))
    assert recompile_module._out_of_memory(SystemError("<function _find_and_load at 0x7f5c82c37ce0> returned NULL "
                                                       "without setting an exception"))
    assert not recompile_module._out_of_memory(SystemError("some other internal error"))
