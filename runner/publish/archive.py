"""Bundle archives: a deterministic .tar.gz of a bundle folder, and a checked, contained extraction.

Determinism: members in sorted order, regular files only, mtime 0, owner 0/0 with no names, mode 0644,
PAX format, and a gzip header with no file name and mtime 0, so the same folder gives the same bytes.
Reading refuses (naming the member) anything but plain files and folders below the one top folder,
and extracts with tarfile's `data` filter, so nothing is ever written outside the target.
"""

from __future__ import annotations

import gzip
import io
import tarfile
import tempfile
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path, PurePosixPath

from runner.contract import ContractError

ARCHIVE_SUFFIXES = (".tar.gz", ".tgz")
_LEVEL = 9
# What gzip.GzipFile writes at level 9 with mtime 0 and no name: magic, deflate, no flags, mtime 0,
# "best compression", OS unknown. Checked on reading, since gzip's CRC does not cover its header.
GZIP_HEADER = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x02\xff"
DAMAGED = "the archive is damaged: download or copy it again"


def is_archive(path: Path) -> bool:
    return path.name.endswith(ARCHIVE_SUFFIXES)


def archive_stem(path: Path) -> str:
    return next(path.name[: -len(s)] for s in ARCHIVE_SUFFIXES if path.name.endswith(s))


def write_archive(folder: Path, out: Path) -> None:
    """`folder`'s files as `out` (a .tar.gz), under a top folder named after the archive."""
    top = archive_stem(out)
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for path in sorted(p for p in folder.rglob("*") if p.is_file()):
            info = tarfile.TarInfo(f"{top}/{path.relative_to(folder).as_posix()}")
            data = path.read_bytes()
            info.size, info.mtime, info.mode, info.uid, info.gid = len(data), 0, 0o644, 0, 0
            tar.addfile(info, io.BytesIO(data))
    with out.open("wb") as raw, gzip.GzipFile(filename="", mode="wb", fileobj=raw, compresslevel=_LEVEL,
                                              mtime=0) as packed:
        packed.write(buffer.getvalue())


def _unpacked(path: Path) -> bytes:
    data = path.read_bytes()
    if data[: len(GZIP_HEADER)] != GZIP_HEADER:
        raise ContractError(path, "the gzip header is not a spec bundle's (bytes 0-9)", fix=DAMAGED)
    try:
        return gzip.decompress(data)
    except EOFError:
        raise ContractError(path, "the archive is truncated", fix=DAMAGED) from None
    except (gzip.BadGzipFile, zlib.error) as err:
        raise ContractError(path, f"the compressed data is damaged ({err})", fix=DAMAGED) from None


def _problem(member: tarfile.TarInfo, top: str) -> str | None:
    name = PurePosixPath(member.name)
    if name.is_absolute() or ".." in name.parts:
        return "member name leaves the bundle folder"
    if not (member.isfile() or member.isdir()):
        return "is not a plain file or folder"
    if name.parts[0] != top:
        return f"is outside the bundle's top folder {top}/"
    return None


def extract(path: Path, target: Path) -> Path:
    """Check every member of the archive at `path`, extract it into `target` and return the bundle folder."""
    try:
        with tarfile.open(fileobj=io.BytesIO(_unpacked(path)), mode="r:") as tar:
            members = tar.getmembers()
            if not members:
                raise ContractError(path, "the archive holds no files", fix=DAMAGED)
            top = PurePosixPath(members[0].name).parts[0]
            for member in members:
                problem = _problem(member, top)
                if problem:
                    raise ContractError(path, f"member {member.name!r} {problem}",
                                        fix="this is not a bundle written by `spec bundle`: do not use it")
            tar.extractall(target, members=members, filter="data")
    except tarfile.TarError as err:
        raise ContractError(path, f"the tar data is damaged ({err})", fix=DAMAGED) from None
    return target / top


@contextmanager
def opened(target: Path) -> Iterator[Path]:
    """The folder of a bundle or suite: `target` itself, or an archive extracted for the duration."""
    if not is_archive(target):
        yield target
        return
    with tempfile.TemporaryDirectory(prefix="spec-bundle-") as scratch:
        yield extract(target, Path(scratch))
