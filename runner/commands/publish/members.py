"""The files of a bundle or suite folder, as `spec verify` may read them: plain files below the folder,
no links, within caps on their count and size, each named by a path that stays in the folder.

Every path a stranger's file names (SHA256SUMS, manifest.json, bundle.json) is looked up here, never
opened as written: a name with `..`, an absolute path, a control character, or one that is not a plain
file found by the scan is refused, so nothing outside the folder (/proc, /etc, a link's target, a FIFO
that would block) is ever read.
"""

from __future__ import annotations

import json
import os
import stat
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from spec_audits.base.safe_files import read_bytes_capped
from spec_audits.compiler.budget import MAX_BYTES
from spec_audits.contract.reader import ContractError

NOT_A_BUNDLE = "this is not a bundle written by `spec bundle`: do not use it"
_HIDDEN = ("Cc", "Cf", "Cs", "Zl", "Zp")
MAX_NAME = 1024
"""Bytes a path named in a bundle may have."""


@dataclass(frozen=True)
class Caps:
    """How much a bundle may hold: files and folders, the bytes of them all, and the bytes a member may
    have before SHA256SUMS has promised its size (README.md and SHA256SUMS itself)."""

    files: int = 10_000
    bytes: int = 2 * MAX_BYTES
    unpromised: int = 16 * 1024**2


DEFAULT_CAPS = Caps()
DEFAULT_CAPS_SMALL = DEFAULT_CAPS.unpromised


def name_problem(name: str) -> str | None:
    """Why `name` (a path relative to a bundle folder, / separated) cannot name one of its files."""
    path = PurePosixPath(name)
    if not path.parts or path.is_absolute() or ".." in path.parts or path.as_posix() != name.rstrip("/"):
        return "leaves the bundle folder or is not a plain relative path"
    if any(unicodedata.category(ch) in _HIDDEN for ch in name) or "\\" in name:
        return "holds a control character or a backslash"
    if len(os.fsencode(name)) > MAX_NAME:
        return f"is longer than {MAX_NAME} bytes"
    return None


class MemberError(Exception):
    """A file of the folder that cannot be read as asked; the message is the failure to report."""


@dataclass
class Members:
    """A scanned folder: every plain file below it (relative / separated path -> size in bytes)."""

    root: Path
    sizes: dict[str, int] = field(default_factory=dict)

    def path(self, name: str) -> Path | None:
        """The file `name` names, if it is one of the scanned plain files (else None: never opened)."""
        return self.root / name if name in self.sizes and name_problem(name) is None else None

    def small(self, name: str, limit: int = DEFAULT_CAPS_SMALL) -> bytes:
        """The bytes of a small file (metadata, not rows): a MemberError if missing or over `limit`."""
        path = self.path(name)
        if path is None:
            raise MemberError(f"{name}: missing")
        if self.sizes[name] > limit:
            raise MemberError(f"{name}: {self.sizes[name]:,} bytes, more than the {limit:,} this file may have")
        return read_bytes_capped(path, limit)

    def json(self, name: str) -> object:
        """A small JSON file, parsed as data (nothing in it is followed or resolved)."""
        try:
            return json.loads(self.small(name))
        except (ValueError, RecursionError) as err:
            raise MemberError(f"{name}: not JSON ({str(err) or 'nested too deeply'})") from None


def _refuse(where: Path, problem: str) -> ContractError:
    return ContractError(where, problem, fix=NOT_A_BUNDLE)


def scan(folder: Path, caps: Caps = DEFAULT_CAPS) -> Members:
    """Every plain file below `folder`, refusing (ContractError) a link, a device, FIFO or socket, a name
    that is not plain, and more files or bytes than `caps` allow; nothing is followed or opened."""
    members, count, total = Members(folder), 0, 0
    pending = [""]
    while pending:
        prefix = pending.pop()
        with os.scandir(folder / prefix if prefix else folder) as entries:
            for entry in sorted(entries, key=lambda e: e.name):
                name = f"{prefix}{entry.name}"
                count += 1
                if count > caps.files:
                    raise _refuse(folder, f"holds more than {caps.files:,} files and folders (--max-files)")
                info = entry.stat(follow_symlinks=False)
                problem = name_problem(name) or _kind_problem(info.st_mode)
                if problem:
                    raise _refuse(folder / name, problem)
                if stat.S_ISDIR(info.st_mode):
                    pending.append(f"{name}/")
                    continue
                total += info.st_size
                if total > caps.bytes:
                    raise _refuse(folder, f"holds more than {caps.bytes:,} bytes (--max-bytes)")
                members.sizes[name] = info.st_size
    return members


def _kind_problem(mode: int) -> str | None:
    if stat.S_ISLNK(mode):
        return "is a symbolic link; a bundle holds plain files only"
    if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
        return "is not a plain file or folder"
    return None
