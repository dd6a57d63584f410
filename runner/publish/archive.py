"""Bundle archives: a deterministic .tar.gz of a bundle folder, and a checked, contained extraction.

Determinism: members in sorted order, regular files only, mtime 0, owner 0/0 with no names, mode 0644,
PAX format, and a gzip header with no file name and mtime 0, so the same folder gives the same bytes.
Reading refuses (naming the member) anything but plain files and folders below the one top folder,
and extracts with tarfile's `data` filter, so nothing is ever written outside the target. Damaged
compressed data is named by member where it can be: the member the inflating stopped in, or, when the
data inflates but its CRC is wrong, the members whose bytes are not what the archive's SHA256SUMS says.
"""

from __future__ import annotations

import contextlib
import gzip
import hashlib
import io
import struct
import tarfile
import tempfile
import zlib
from collections.abc import Iterator
from pathlib import Path, PurePosixPath

from runner.contract import ContractError

ARCHIVE_SUFFIXES = (".tar.gz", ".tgz")
_LEVEL = 9
_CHUNK = 1 << 12
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


def _inflate(stream: bytes) -> tuple[bytes, zlib.error | None, bytes | None]:
    """Raw deflate, in chunks so that the data before a damaged spot is kept: the output, the error that
    stopped it, and what follows the deflate stream (None when the stream never ended: truncated)."""
    inflater = zlib.decompressobj(-zlib.MAX_WBITS)
    out = bytearray()
    for start in range(0, len(stream), _CHUNK):
        try:
            out += inflater.decompress(stream[start:start + _CHUNK])
        except zlib.error as err:
            return bytes(out), err, None
        if inflater.eof:
            return bytes(out), None, inflater.unused_data + stream[start + _CHUNK:]
    return bytes(out), None, None


def _members(data: bytes) -> Iterator[tarfile.TarInfo]:
    """The members whose headers can be read from (possibly partial) tar data, until one cannot."""
    with contextlib.suppress(tarfile.TarError, EOFError), tarfile.open(fileobj=io.BytesIO(data), mode="r:") as tar:
        yield from tar


def _at(data: bytes) -> str:
    """Which member the end of partial tar data falls in."""
    names = [m.name for m in _members(data) if m.offset < len(data)]
    return f" in or after member {names[-1]!r}" if names else ""


def _differing(data: bytes) -> str:
    """The members whose bytes are not what the archive's SHA256SUMS says, as a phrase."""
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:") as tar:
        files = {m.name: tar.extractfile(m).read() for m in tar if m.isfile()}  # type: ignore[union-attr]
    sums = next((body for name, body in files.items() if name.endswith("/SHA256SUMS")), b"").decode(errors="replace")
    listed = {line[66:]: line[:64] for line in sums.splitlines()}
    bad = [n for n, body in files.items() if n.partition("/")[2] in listed
           and hashlib.sha256(body).hexdigest() != listed[n.partition("/")[2]]]
    if not bad:
        return "the damage is in a tar header, the padding or the gzip trailer"
    return f"{'members' if len(bad) > 1 else 'member'} {', '.join(map(repr, bad))} not as SHA256SUMS lists"


def _unpacked(path: Path) -> bytes:
    data = path.read_bytes()
    if data[: len(GZIP_HEADER)] != GZIP_HEADER:
        raise ContractError(path, "the gzip header is not a spec bundle's (bytes 0-9)", fix=DAMAGED)
    tar, error, rest = _inflate(data[len(GZIP_HEADER):])
    if error is not None:
        raise ContractError(path, f"the compressed data is damaged ({error}){_at(tar)}", fix=DAMAGED)
    if rest is None or len(rest) < 8:
        raise ContractError(path, f"the archive is truncated{_at(tar)}", fix=DAMAGED)
    if rest != struct.pack("<II", zlib.crc32(tar), len(tar) & 0xFFFFFFFF):
        try:
            where = _differing(tar)
        except tarfile.TarError as err:
            where = f"a tar header is damaged ({err}){_at(tar)}"
        raise ContractError(path, f"the data does not match the archive's CRC: {where}", fix=DAMAGED)
    return tar


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


@contextlib.contextmanager
def opened(target: Path) -> Iterator[Path]:
    """The folder of a bundle or suite: `target` itself, or an archive extracted for the duration."""
    if not is_archive(target):
        yield target
        return
    with tempfile.TemporaryDirectory(prefix="spec-bundle-") as scratch:
        yield extract(target, Path(scratch))
