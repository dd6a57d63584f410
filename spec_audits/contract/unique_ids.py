"""A suite.jsonl's unique-id check, kept while its rows stream: 8 bytes (a hash) per row's id, read again on a clash.

`spec_audits.contract.reader` hands each row's id to `IdHashes.add` as it validates the file, then asks for the
first repeat: the file is read a second time only when two ids' hashes agree, to tell a true repeat from a hash
collision, so a suite of any size is checked in 8 bytes a row.
"""

from __future__ import annotations

import hashlib
from array import array
from collections import Counter
from pathlib import Path

from spec_audits.base.safe_files import iter_lines_capped, open_regular
from spec_audits.contract.suite_model import SuiteRow

COUNTED_IDS = 1 << 16  # up to this many rows, repeated id hashes are counted in a dict (no numpy import)


def id_hash(text: str) -> int:
    """A 64-bit hash of an id: what a streamed suite keeps of each row to find duplicates and done answers."""
    return int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest(), "big")


class IdHashes:
    """The hashes of the ids of a suite.jsonl's rows, in the order they were added (until `first_repeat`)."""

    def __init__(self) -> None:
        self.hashes = array("Q")

    def __len__(self) -> int:
        return len(self.hashes)

    def add(self, text: str) -> None:
        self.hashes.append(id_hash(text))

    def first_repeat(self, path: Path) -> tuple[int, str] | None:
        """The line number and id of the first row of `path` whose id an earlier row has, or None; the file is read
        again only when two hashes agree. The hashes may come back reordered."""
        suspects = _repeated(self.hashes)
        if not suspects:
            return None
        seen: set[str] = set()
        with open_regular(path) as handle:
            for number, line in enumerate(iter_lines_capped(handle, path), start=1):
                if line.strip():
                    found = SuiteRow.model_validate_json(line).id
                    if found in seen:
                        return number, found
                    if id_hash(found) in suspects:
                        seen.add(found)
        return None


def _repeated(ids: array[int]) -> set[int]:
    """The id hashes that occur more than once: counted for a suite of up to COUNTED_IDS rows, so a command that
    reads a small suite (`spec show`) never imports numpy; beyond, `ids` is sorted in place by numpy and neighbours
    compared, with no copy (a Counter of a million hashes took about 150 MB)."""
    if len(ids) <= COUNTED_IDS:
        return {value for value, count in Counter(ids).items() if count > 1}
    import numpy as np

    hashes = np.frombuffer(ids, dtype=np.uint64)  # a view of the array's own buffer: the sort reorders `ids`
    hashes.sort()
    return set(hashes[1:][hashes[1:] == hashes[:-1]].tolist())
