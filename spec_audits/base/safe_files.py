"""Files in folders a stranger may have written (run folders, ledgers, locks, bundles, imports, tables),
opened safely: never through a link, only a regular file, and read within a size and a line-length cap.

- `open_regular(path)`: the file opened for reading with O_NOFOLLOW and O_NONBLOCK (a FIFO is refused, never
  waited on), then checked to be a regular file by fstat on the open descriptor (no race with a swap).
- `read_bytes_capped` / `read_text_capped`: the whole file, refused past `max_bytes` without reading it all
  (a link to /dev/zero is a link and refused; a growing file is cut off at the cap and refused).
- `iter_lines_capped`: the lines of an open binary handle, each refused past `max_line_bytes` at once (a
  400 MB line costs at most the cap in memory).
- `open_lock(path)`: a lock file opened for writing without following a link or truncating anything first.
- `open_append(path)`: a file appended to (results.jsonl, a turn journal), never through a link.
- `fresh_opener`: an opener for `open()` that makes the file anew, so that a link planted at a `.partial`
  name is dropped, never written through.
- `present(path)`: whether anything, a dangling link included, is at `path` (so a link or a folder where a
  file belongs is an error naming it, never taken for a missing file).

Every refusal is an UnsafeFile (exit status 1) naming the file; docs/running.md ("Files spec reads from a
folder someone else may have written") lists the caps and the messages, docs/threat-model.md the tests.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO, Protocol

import click

from spec_audits.base.terminal import visible

MAX_FILE_BYTES = 1024**3  # a file read whole (results.jsonl, a batch ledger's errors)
DOCUMENT_BYTES = 64 * 1024**2  # a JSON document (run.json, manifest.json, a ledger, a key list)
MAX_LINE_BYTES = 64 * 1024**2  # one line of a JSON-lines file (a row, a transcript record)
_KINDS = ((stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a FIFO"), (stat.S_ISSOCK, "a socket"),
          (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"))


class Readable(Protocol):
    """A binary stream read by lines: an open file, a gzip stream."""

    def readline(self, size: int, /) -> bytes: ...


class UnsafeFile(click.ClickException):
    """A file spec will not read: a link, not a regular file, or over a cap (exit status 1)."""

    def __init__(self, path: Path | str, problem: str) -> None:
        self.path = Path(path)
        super().__init__(f"{visible(str(path))}: {problem}")


def _kind(mode: int) -> str:
    return next((name for test, name in _KINDS if test(mode)), "not a regular file")


def _opened(path: Path, flags: int, create_mode: int = 0o644) -> int:
    """A descriptor of the regular file at `path`, opened without following a link and without blocking."""
    try:
        fd = os.open(path, flags | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, create_mode)
    except OSError as err:
        if err.errno == errno.ELOOP:
            raise UnsafeFile(path, "is a symbolic link; spec does not follow links in the folders it reads: "
                                   "put the file itself there") from None
        if err.errno in (errno.ENXIO, errno.EISDIR):  # a FIFO with no writer (opened to write), a folder
            raise UnsafeFile(path, f"is {_kind(os.lstat(path).st_mode)}, not a regular file") from None
        raise UnsafeFile(path, f"cannot be opened ({err.strerror})") from None
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        raise UnsafeFile(path, f"is {_kind(mode)}, not a regular file")
    os.set_blocking(fd, True)
    return fd


def open_regular(path: Path | str) -> BinaryIO:
    """`path` opened for binary reading: a regular file, not a link (see the module's docstring)."""
    return os.fdopen(_opened(Path(path), os.O_RDONLY), "rb")


def open_lock(path: Path | str) -> int:
    """A read-write descriptor of the lock file at `path`, created if missing; never a link's target, nor a
    file with a second name (a hard link), whose other name the lock's pid would overwrite."""
    fd = _opened(Path(path), os.O_RDWR | os.O_CREAT)
    if os.fstat(fd).st_nlink > 1:
        os.close(fd)
        raise UnsafeFile(path, "has another name (a hard link); spec writes its pid only into a lock file of its "
                               "own: remove it")
    return fd


def open_append(path: Path | str) -> int:
    """A descriptor appending to the regular file at `path`, created if missing; never a link's target."""
    return _opened(Path(path), os.O_WRONLY | os.O_APPEND | os.O_CREAT)


def fresh_opener(path: str, flags: int) -> int:
    """For `open(path, "w", opener=fresh_opener)`: whatever is at `path` is unlinked first (a planted link
    goes, its target untouched), then the file is made anew (O_EXCL, O_NOFOLLOW)."""
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path)
    return os.open(path, flags | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)


def present(path: Path | str) -> bool:
    """Whether anything is at `path`, a link (even a dangling one) included."""
    return os.path.lexists(path)


def read_bytes_capped(path: Path | str, max_bytes: int = MAX_FILE_BYTES) -> bytes:
    """The bytes of the regular file at `path`; UnsafeFile if it holds more than `max_bytes`."""
    with open_regular(path) as handle:
        data = handle.read(max_bytes + 1)
    if len(data) > max_bytes:
        raise UnsafeFile(path, f"is over {max_bytes:,} bytes, the most spec reads from such a file")
    return data


def read_text_capped(path: Path | str, max_bytes: int = MAX_FILE_BYTES, encoding: str = "utf-8") -> str:
    """read_bytes_capped, decoded; UnsafeFile if it is not `encoding` text."""
    try:
        return read_bytes_capped(path, max_bytes).decode(encoding)
    except UnicodeDecodeError as err:
        raise UnsafeFile(path, f"is not {encoding} text (byte {err.start:,})") from None


def iter_lines_capped(handle: Readable, path: Path | str, max_line_bytes: int = MAX_LINE_BYTES) -> Iterator[bytes]:
    """The lines of `handle` (newline kept); UnsafeFile naming the line as soon as one exceeds the cap."""
    number = 0
    while line := handle.readline(max_line_bytes + 1):
        number += 1
        if len(line) > max_line_bytes:
            raise UnsafeFile(path, f"line {number:,} is over {max_line_bytes:,} bytes, the most spec reads as "
                                   "one line")
        yield line
