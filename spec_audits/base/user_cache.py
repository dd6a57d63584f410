"""The user's own cache folder, and files in it that only this user wrote.

What spec keeps between commands (the response cache, the embedded model, the built parser's tables, the
compiled templates) lives in one folder of the user's: $SPEC_CACHE_DIR, else $XDG_CACHE_HOME/spec, else
~/.cache/spec; never in a folder a spec, a suite or another user controls. `read_private` reads a file there
only when it is a regular file (no link followed) that this user owns and no one else may read or write;
`write_private` replaces one atomically, readable by this user alone.
"""

from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path

CACHE_ENV = "SPEC_CACHE_DIR"


def cache_dir() -> Path:
    """The user cache folder: $SPEC_CACHE_DIR, else $XDG_CACHE_HOME/spec, else ~/.cache/spec."""
    if os.environ.get(CACHE_ENV):
        return Path(os.environ[CACHE_ENV])
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "spec"


def read_private(path: Path) -> bytes | None:
    """The file's bytes when it is a regular file this user owns that no one else may read or write; None
    otherwise (absent, a link, a FIFO, another user's, open to others, unreadable)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_uid != os.getuid() or info.st_mode & 0o077:
            return None
        return handle.read()


def write_private(path: Path, data: bytes) -> None:
    """`data` at `path`, readable and writable by this user alone, replaced atomically (a reader sees the
    old file or the new one, never part of one); folders made on the way are this user's alone. An OSError
    (a full disk, a read-only folder) is the caller's to judge."""
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    fd, staged = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")  # mode 0600
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.replace(staged, path)
    except BaseException:
        Path(staged).unlink(missing_ok=True)
        raise
