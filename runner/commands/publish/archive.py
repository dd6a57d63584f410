"""Bundle archives: a deterministic .tar.gz of a bundle folder, and a checked, capped, streamed extraction.

Determinism: members in sorted order, regular files only, mtime 0, owner 0/0 with no names, mode 0644,
PAX format, and a gzip header with no file name and mtime 0, so the same folder gives the same bytes.

Reading inflates the gzip data as tarfile reads it, never the whole archive into memory. Each member is
checked from its header before a byte of it is read: a plain file or folder (no link, device or sparse
file) below the one top folder, named once, within the caps on members and bytes, and no larger than
SHA256SUMS promises (a member before SHA256SUMS, README.md, gets a small fixed allowance). It is then
written into the target by this module (tarfile extracts nothing). After the last member only zeros may
follow (`tar -i` would read on past the end-of-archive blocks, into members this check never saw).
Damaged compressed data is named by member: the member the inflating stopped in, or, when the data
inflates but its CRC is wrong, the members whose bytes are not what the archive's SHA256SUMS says.
"""

from __future__ import annotations

import contextlib
import gzip
import hashlib
import io
import os
import signal
import struct
import tarfile
import tempfile
import threading
import zlib
from collections.abc import Iterator
from pathlib import Path, PurePosixPath
from types import FrameType
from typing import IO

from spec_audits.base.safe_files import open_regular
from spec_audits.contract.reader import ContractError
from spec_audits.runner.commands.publish.members import DEFAULT_CAPS, NOT_A_BUNDLE, Caps, Members, name_problem, scan
from spec_audits.runner.commands.publish.sums import SUMS_FILE, Listing, parse_sums

ARCHIVE_SUFFIXES = (".tar.gz", ".tgz")
_LEVEL = 9
_CHUNK = 1 << 16
_MAX_HEADER = 1 << 20
"""Bytes of a pax or GNU long-name header: tarfile reads one whole before the member it describes."""
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


class _Damaged(Exception):
    """The gzip data cannot be inflated to its end: the message says how."""


class _Refused(Exception):
    """A member no bundle has, or (`whole`) an archive no bundle is. `unread` when refused for its size,
    before reading it; otherwise the rest of the archive is inflated first, since damage can make any
    header look odd, and damage is what is reported then."""

    def __init__(self, problem: str, unread: bool = False, whole: bool = False):
        super().__init__(problem)
        self.unread, self.whole = unread, whole


class _Inflating:
    """The tar data inside a bundle's gzip file, inflated as tarfile reads it: its size capped at `cap`
    bytes, its CRC kept, and the gzip trailer that follows it."""

    def __init__(self, raw: IO[bytes], cap: int):
        self.raw, self.cap = raw, cap
        self.inflater = zlib.decompressobj(-zlib.MAX_WBITS)
        self.size = self.crc = 0
        self.data_end = 0  # bytes up to and including the last that is not zero
        self.trailer: bytes | None = None

    def read(self, size: int = -1) -> bytes:
        wanted = size if size >= 0 else _CHUNK
        out = bytearray()
        while len(out) < wanted and self.trailer is None:
            data = self.inflater.unconsumed_tail or self.raw.read(_CHUNK)
            if not data:
                raise _Damaged("the archive is truncated")
            try:
                out += self.inflater.decompress(data, wanted - len(out))
            except zlib.error as err:
                raise _Damaged(f"the compressed data is damaged ({err})") from None
            if self.inflater.eof:
                self.trailer = self.inflater.unused_data + self.raw.read(max(0, 9 - len(self.inflater.unused_data)))
        if out.strip(b"\0"):
            self.data_end = self.size + len(out.rstrip(b"\0"))
        self.size += len(out)
        if self.size > self.cap:
            raise _Refused(f"inflates to more than {self.cap:,} bytes (--max-bytes)", unread=True, whole=True)
        self.crc = zlib.crc32(out, self.crc)
        return bytes(out)

    def sound(self) -> bool:
        """Inflate what is left; whether the trailer's CRC and length are the data's (raises _Damaged)."""
        while self.trailer is None:
            self.read(_CHUNK)
        return self.trailer == struct.pack("<II", self.crc, self.size & 0xFFFFFFFF)


_LONG_HEADERS = (tarfile.XHDTYPE, tarfile.XGLTYPE, tarfile.SOLARIS_XHDTYPE, tarfile.GNUTYPE_LONGNAME,
                 tarfile.GNUTYPE_LONGLINK)
_SPARSE = "holds a sparse file; a bundle holds plain files only"


class _Header(tarfile.TarInfo):
    """tarfile reads a pax or GNU long-name header whole, and a sparse file's map, before the member they
    describe reaches the caller: these overrides of its (long stable) private hooks refuse them there."""

    def _proc_member(self, tar: tarfile.TarFile) -> tarfile.TarInfo:
        if self.type == tarfile.GNUTYPE_SPARSE:
            raise _Refused(_SPARSE, unread=True, whole=True)
        if self.type in _LONG_HEADERS and self.size > _MAX_HEADER:
            raise _Refused(f"holds a {self.size:,}-byte extended tar header", unread=True, whole=True)
        member: tarfile.TarInfo = super()._proc_member(tar)  # type: ignore[misc]  # typeshed omits the private hook
        return member

    def _proc_gnusparse_00(self, *args: object) -> None:
        raise _Refused(_SPARSE, unread=True, whole=True)

    _proc_gnusparse_01 = _proc_gnusparse_10 = _proc_gnusparse_00


class _Extraction:
    """The members taken so far: each checked, written into `target` and hashed."""

    def __init__(self, target: Path, caps: Caps):
        self.target, self.caps = target, caps
        self.kinds: dict[str, bool] = {}  # member name -> is a file
        self.hashes: dict[str, str] = {}
        self.top: str | None = None
        self.listing: Listing | None = None
        self.end = 0  # where the tar data's end-of-archive blocks start
        self.current = ""

    def at(self) -> str:
        return f" in or after member {self.current!r}" if self.current else ""

    def take(self, tar: tarfile.TarFile, member: tarfile.TarInfo) -> None:
        self.current = member.name
        if len(self.kinds) >= self.caps.files:
            raise _Refused(f"holds more than {self.caps.files:,} files and folders (--max-files)", unread=True,
                           whole=True)
        self._check(member)
        self.kinds[member.name] = member.isfile()
        if member.isdir():
            (self.target / member.name).mkdir(parents=True, exist_ok=True)
            return
        source = tar.extractfile(member)
        assert source is not None  # a regular file, checked above
        self.hashes[member.name] = _copy(source, self.target / member.name)
        if member.name == f"{self.top}/{SUMS_FILE}":
            self.listing = parse_sums((self.target / member.name).read_text(encoding="utf-8", errors="replace"))

    def _check(self, member: tarfile.TarInfo) -> None:
        name = PurePosixPath(member.name)
        problem = name_problem(member.name)
        if problem:
            raise _Refused(problem)
        if not (member.isfile() or member.isdir()):
            raise _Refused("is not a plain file or folder")
        self.top = self.top or name.parts[0]
        if name.parts[0] != self.top or (member.isfile() and len(name.parts) < 2):
            raise _Refused(f"is outside the bundle's top folder {self.top}/")
        if member.name in self.kinds:
            raise _Refused("appears twice in the archive")
        above = next((str(p) for p in name.parents if self.kinds.get(str(p))), None)
        if above:
            raise _Refused(f"lies below member {above!r}, which is a file")
        if member.isfile():
            self._check_size(member, str(name.relative_to(self.top)))

    def _check_size(self, member: tarfile.TarInfo, inside: str) -> None:
        if self.listing is None:
            if member.size > self.caps.unpromised:
                raise _Refused(f"is {member.size:,} bytes, more than the {self.caps.unpromised:,} a member may "
                               f"have before {SUMS_FILE} lists its size", unread=True)
        elif inside not in self.listing.sizes:
            raise _Refused(f"is not listed in {SUMS_FILE}")
        elif member.size > self.listing.sizes[inside]:
            raise _Refused(f"is {member.size:,} bytes, more than the {self.listing.sizes[inside]:,} that "
                           f"{SUMS_FILE} promises", unread=True)

    def differing(self) -> str:
        """The members whose bytes are not what the archive's SHA256SUMS says, as a phrase."""
        listed = self.listing.sha256 if self.listing else {}
        bad = [name for name, digest in self.hashes.items()
               if name.partition("/")[2] in listed and digest != listed[name.partition("/")[2]]]
        if not bad:
            return "the damage is in a tar header, the padding or the gzip trailer"
        return f"{'members' if len(bad) > 1 else 'member'} {', '.join(map(repr, bad))} not as {SUMS_FILE} lists"


def _copy(source: IO[bytes], path: Path) -> str:
    """`source` written to the new file `path` (never through a link: the target is ours and fresh)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    digest = hashlib.sha256()
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o644)
    with os.fdopen(fd, "wb") as out:
        for block in iter(lambda: source.read(_CHUNK), b""):
            digest.update(block)
            out.write(block)
    return digest.hexdigest()


def _refusal(path: Path, err: _Refused, extraction: _Extraction) -> ContractError:
    problem = f"the archive {err}{extraction.at()}" if err.whole else f"member {extraction.current!r} {err}"
    return ContractError(path, problem, fix=NOT_A_BUNDLE)


def _read_members(path: Path, stream: _Inflating, extraction: _Extraction) -> None:
    """Take every member; a refusal that damage could explain becomes the damage when the data is bad."""
    try:
        with tarfile.open(fileobj=stream, mode="r|", tarinfo=_Header) as tar:  # type: ignore[call-overload]
            for member in tar:
                extraction.take(tar, member)
            extraction.end = tar.offset
    except _Damaged as err:
        raise ContractError(path, f"{err}{extraction.at()}", fix=DAMAGED) from None
    except (_Refused, tarfile.TarError) as err:
        if not (isinstance(err, _Refused) and err.unread):
            with contextlib.suppress(_Refused):  # too big to inflate to the end: the refusal stands
                _check_end(path, stream, extraction)
        if isinstance(err, _Refused):
            raise _refusal(path, err, extraction) from None
        raise ContractError(path, f"the tar data is damaged ({err}){extraction.at()}", fix=DAMAGED) from None


def _check_end(path: Path, stream: _Inflating, extraction: _Extraction) -> None:
    """Inflate the rest of the archive and check its CRC and length (raises _Refused over the cap)."""
    try:
        sound = stream.sound()
    except _Damaged as err:
        raise ContractError(path, f"{err}{extraction.at()}", fix=DAMAGED) from None
    if not sound:
        raise ContractError(path, f"the data does not match the archive's CRC: {extraction.differing()}",
                            fix=DAMAGED)


def extract(path: Path, target: Path, caps: Caps = DEFAULT_CAPS) -> Path:
    """Check every member of the archive at `path`, write it into `target` and return the bundle folder."""
    with open_regular(path) as raw:
        if raw.read(len(GZIP_HEADER)) != GZIP_HEADER:
            raise ContractError(path, "the gzip header is not a spec bundle's (bytes 0-9)", fix=DAMAGED)
        stream, extraction = _Inflating(raw, caps.bytes), _Extraction(target, caps)
        _read_members(path, stream, extraction)
        try:
            _check_end(path, stream, extraction)
        except _Refused as err:
            raise _refusal(path, err, extraction) from None
    if stream.data_end > extraction.end:  # what `tar -i` would read on: a member hidden from this check
        raise ContractError(path, f"the archive holds data after the end of its tar data (byte {extraction.end:,})",
                            fix=NOT_A_BUNDLE)
    if extraction.top is None:
        raise ContractError(path, "the archive holds no files", fix=DAMAGED)
    return target / extraction.top


@contextlib.contextmanager
def opened(target: Path, caps: Caps = DEFAULT_CAPS) -> Iterator[Members]:
    """The files of a bundle or suite folder: `target` itself, or an archive extracted for the duration
    (removed on return, an exception, Ctrl-C or SIGTERM; see spec_audits.runner.commands.publish.cli)."""
    if not is_archive(target):
        yield scan(target, caps)
        return
    with tempfile.TemporaryDirectory(prefix="spec-bundle-") as scratch:
        yield scan(extract(target, Path(scratch), caps), caps)


@contextlib.contextmanager
def removed_on_termination() -> Iterator[None]:
    """Within the block, SIGTERM raises SystemExit (status 143) as Ctrl-C raises KeyboardInterrupt, so the
    temporary folders of an extraction or a recompile are removed on the way out, not left behind."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def stop(signum: int, frame: FrameType | None) -> None:
        raise SystemExit(128 + signum)

    previous = signal.signal(signal.SIGTERM, stop)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)
