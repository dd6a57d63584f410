"""One process per run folder: an exclusive lock held while a run or merge writes the folder.

The lock is `fcntl.flock` on LOCK_FILE in the folder, which holds the holder's pid for the message a
second process gets. The kernel drops the lock when its holder exits, however it exits, so a killed run
never leaves a folder locked; the file itself stays (removing it would let two processes lock two
different files of one name).
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from collections.abc import Iterator
from pathlib import Path

from spec_audits.base.safe_files import open_lock, open_regular, present
from spec_audits.runner.run_config import RunError

LOCK_FILE = ".spec-lock"


def _busy(folder: Path, fd: int) -> RunError:
    try:
        holder = os.pread(fd, 200, 0).decode("utf-8", "replace").strip()
    except OSError:
        holder = ""
    who = f"another process ({holder})" if holder else "another process"
    return RunError(f"{folder} is in use by {who}; wait for it to finish, or use another --out")


@contextlib.contextmanager
def locked(folder: Path, what: str) -> Iterator[None]:
    """Hold `folder` (created if missing) for writing; RunError naming the holder if another process does."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise RunError(f"{folder}: cannot lock the folder ({err.strerror}); use another --out") from None
    fd = open_lock(folder / LOCK_FILE)  # never a link's target: the pid is written into it
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise _busy(folder, fd) from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{what}, pid {os.getpid()}\n".encode(), 0)
        yield
    finally:
        os.close(fd)


@contextlib.contextmanager
def reading(folder: Path) -> Iterator[None]:
    """Keep runs out of `folder` while it is read whole (e.g. merged); RunError if a run holds it now.
    A folder without a lock file has had no run since locking began, and is read as it is."""
    lock = folder / LOCK_FILE
    if not present(lock):
        yield
        return
    with open_regular(lock) as handle:
        try:
            fcntl.flock(handle.fileno(), fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            raise _busy(folder, handle.fileno()) from None
        yield
