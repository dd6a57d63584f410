"""SHA256SUMS: every other file of a bundle with its sha256 (`sha256sum -c` format) and its size.

The sizes are comment lines, `# size BYTES  PATH`, which `sha256sum -c` and `shasum -c` skip. They are
the promise `spec verify` holds a member to before reading it: a member larger than SHA256SUMS says is
refused unread, so a small archive cannot make verify inflate or hash more than its list admits.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

from spec_audits.contract.writer import file_sha256
from spec_audits.runner.commands.publish.members import name_problem

SUMS_FILE = "SHA256SUMS"
HEADER = "# sizes in bytes, checked by `spec verify` before a file is read (sha256sum -c skips these lines)\n"
_SIZE = re.compile(r"# size (0|[1-9][0-9]{0,15})  (.+)")
_SUM = re.compile(r"([0-9a-f]{64})  (.+)")
V = TypeVar("V", int, str)  # a listed size or sha256


@dataclass
class Listing:
    """What SHA256SUMS says: each path's sha256 and size, and the lines it could not read."""

    sha256: dict[str, str] = field(default_factory=dict)
    sizes: dict[str, int] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)


def sums_text(folder: Path) -> str:
    """SHA256SUMS for every file of `folder` but itself, sorted by path: the sizes, then the hashes."""
    names = [name for name in sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file())
             if name != SUMS_FILE]
    sizes = "".join(f"# size {(folder / name).stat().st_size}  {name}\n" for name in names)
    return HEADER + sizes + "".join(f"{file_sha256(folder / name)}  {name}\n" for name in names)


def _entry(line: str, listing: Listing) -> str | None:
    """Record one line in `listing`; why it cannot be read, if it cannot."""
    size, digest = _SIZE.fullmatch(line), _SUM.fullmatch(line)
    match = size or digest
    if match is None:
        return None if line.startswith("#") else "not '<sha256>  <path>' or '# size <bytes>  <path>'"
    name = match[2]
    problem = name_problem(name)
    if problem:
        return f"path {name!r} {problem}"
    if size:
        return _record(listing.sizes, name, int(match[1]), "size")
    return _record(listing.sha256, name, match[1], "sha256")


def _record(listed: dict[str, V], name: str, value: V, kind: str) -> str | None:
    if name in listed:
        return f"{name} has a second {kind}"
    listed[name] = value
    return None


def parse_sums(text: str) -> Listing:
    """The sha256 and size of each path SHA256SUMS lists; a path with one but not the other is a problem."""
    listing = Listing()
    for number, line in enumerate(text.splitlines(), start=1):
        problem = _entry(line, listing)
        if problem:
            listing.problems.append(f"{SUMS_FILE}:{number}: {problem}")
    for name in sorted(listing.sha256.keys() ^ listing.sizes.keys()):
        what = "size" if name in listing.sha256 else "sha256"
        listing.problems.append(f"{SUMS_FILE}: {name} has no {what}")
    return listing
