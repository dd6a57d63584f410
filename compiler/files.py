"""Which files a spec may read: its imports and data files, inside the spec's root folder.

The root is the folder of the spec given on the command line; `--allow-path DIR` adds folders. A path
that leaves them (absolute, `../`, or a symlink pointing out), that is not a regular file (a FIFO or a
device would block or never end), or that holds a NUL byte or an over-long name is refused with a
located error before anything is opened.
"""

from __future__ import annotations

import contextlib
import contextvars
import os
import stat
from collections.abc import Iterator, Sequence
from pathlib import Path

from spec_audits.compiler.errors import ErrorCollector, Span

MAX_NAME = 255  # bytes in one path component (the common file-system limit)
MAX_PATH = 4096  # bytes in a whole path
MAX_FILE = 256 * 1024**2  # bytes in one spec or data file: each is read whole

_roots: contextvars.ContextVar[tuple[Path, ...] | None] = contextvars.ContextVar("spec_roots", default=None)


@contextlib.contextmanager
def spec_roots(spec_file: Path, allowed: Sequence[Path] = ()) -> Iterator[None]:
    """Within the block, spec files may read only under the spec's folder and the allowed ones."""
    roots = tuple(_real(folder) for folder in (spec_file.parent, *allowed))
    token = _roots.set(roots)
    try:
        yield
    finally:
        _roots.reset(token)


def _real(path: Path) -> Path:
    return Path(os.path.realpath(path.absolute()))


def checked_path(base: Path, written: str, span: Span, what: str, errors: ErrorCollector) -> Path | None:
    """`written` (as the spec spells it) resolved against `base`, or None after reporting why it may not
    be read. A path that does not exist is returned: the caller says it is missing in its own words."""
    problem = _name_problem(written) or _place_problem(_real(base / written))
    if problem is None:
        return base / written
    shown = written.replace("\0", "\\0")
    errors.add(span, f"{what} '{shown}' {problem}", _hint(problem))
    return None


def _name_problem(written: str) -> str | None:
    if "\0" in written:
        return "contains a NUL byte"
    encoded = os.fsencode(written)
    if len(encoded) > MAX_PATH or any(len(part) > MAX_NAME for part in encoded.split(b"/")):
        return f"is too long (at most {MAX_NAME} bytes a name, {MAX_PATH} a path)"
    return None


def _place_problem(real: Path) -> str | None:
    roots = _roots.get()
    if roots is not None and not any(real == root or real.is_relative_to(root) for root in roots):
        return "is outside the spec's folder"
    return kind_problem(real)


def kind_problem(path: Path) -> str | None:
    """Why `path` may not be read whole (a folder, a FIFO or device that would block, a huge file), or
    None; a path that does not exist is left to the caller."""
    try:
        info = path.stat()
    except FileNotFoundError:
        return None
    except OSError as err:
        return f"cannot be read ({err.strerror})"
    if stat.S_ISDIR(info.st_mode):
        return "is a folder, not a file"
    if not stat.S_ISREG(info.st_mode):
        return "is not a regular file (a FIFO, socket or device)"
    if info.st_size > MAX_FILE:
        return f"is larger than {MAX_FILE // 1024**2} MB"
    return None


def _hint(problem: str) -> str | None:
    if problem == "is outside the spec's folder":
        return "specs read files under their own folder; pass --allow-path DIR to allow another"
    return None
