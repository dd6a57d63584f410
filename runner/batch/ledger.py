"""The run folder's record of its batches: RUN/batches/ledger.json (one entry per batch file, rewritten
atomically at every step), RUN/batches/<part>.keys (the custom_ids of each file) and
RUN/batches/errors.json (custom_id -> why that request failed, for the requests that did).

A part is written (its keys on disk, its lines in memory), then uploaded (input_file_id), then submitted
(batch_id), each recorded before the next step starts; a part is collected once its answers are in the
response cache and its errors in errors.json. These are our own files, but read as a stranger's data: a
damaged ledger is a located error, a part's name and the provider's ids must have a plain form before they
name a file or a URL, and a resumed run checks every part against its own requests before using it
(verify.py).
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, ValidationError

from spec_audits.base.safe_files import DOCUMENT_BYTES, fresh_opener, present, read_bytes_capped, read_text_capped
from spec_audits.runner.run_config import RunError

BATCH_DIR = "batches"
LEDGER_FILE = "ledger.json"
ERRORS_FILE = "errors.json"
FINAL = frozenset({"completed", "failed", "expired", "cancelled"})
KEY = re.compile(r"[0-9a-f]{64}")

# A provider's file or batch id goes into a URL path: no '/', '?', '#', '%', and no '..'.
PROVIDER_ID = r"^[A-Za-z0-9][A-Za-z0-9_:=-]*(\.[A-Za-z0-9_:=-]+)*$"
ID_CHARS = 200
PartName = Annotated[str, StringConstraints(pattern=r"^r[0-9]{3,}-p[0-9]{4,}$")]
ProviderId = Annotated[str, StringConstraints(pattern=PROVIDER_ID, max_length=ID_CHARS)]


class Part(BaseModel):
    """One batch file and the batch made of it."""

    model_config = ConfigDict(extra="forbid")

    name: PartName
    model: str
    round: int = Field(ge=1)
    requests: int = Field(ge=1)
    bytes: int = Field(ge=1)
    status: str = "written"
    input_file_id: ProviderId | None = None
    batch_id: ProviderId | None = None
    output_file_id: ProviderId | None = None
    error_file_id: ProviderId | None = None
    counts: dict[str, int] = Field(default_factory=dict)
    reason: str | None = None  # why the provider failed the whole batch
    collected: bool = False

    @property
    def final(self) -> bool:
        return self.status in FINAL


class Ledger(BaseModel):
    model_config = ConfigDict(extra="forbid")

    parts: list[Part] = Field(default_factory=list)

    def next_round(self) -> int:
        return max((part.round for part in self.parts), default=0) + 1


def batch_dir(run_dir: Path) -> Path:
    return run_dir / BATCH_DIR


def read_ledger(run_dir: Path) -> Ledger:
    path = batch_dir(run_dir) / LEDGER_FILE
    if not present(path):
        return Ledger()
    try:
        return Ledger.model_validate_json(read_bytes_capped(path, DOCUMENT_BYTES))
    except ValidationError as err:
        first = err.errors()[0]
        where = ".".join(str(part) for part in first["loc"])
        raise RunError(f"{path}: not a batch ledger spec wrote ({where}: {first['msg']}); the run's batches "
                       "cannot be resumed from it") from None


def write_ledger(run_dir: Path, ledger: Ledger) -> None:
    """Write the ledger atomically: a kill leaves the old one or the new one, never half of one."""
    write_atomic(batch_dir(run_dir) / LEDGER_FILE, ledger.model_dump_json(indent=1).encode() + b"\n")


def keys_path(run_dir: Path, part: Part) -> Path:
    return batch_dir(run_dir) / f"{part.name}.keys"


def write_atomic(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(path.name + ".partial")
    with open(partial, "wb", opener=fresh_opener) as handle:  # never through a link planted at that name
        handle.write(data)
    os.replace(partial, path)


def read_keys(run_dir: Path, part: Part) -> list[str]:
    path = keys_path(run_dir, part)
    keys = read_text_capped(path, DOCUMENT_BYTES, encoding="ascii").split()
    bad = next((n for n, key in enumerate(keys, 1) if not KEY.fullmatch(key)), None)
    if bad is not None or len(keys) != part.requests:
        raise RunError(f"{path}: not the {part.requests} custom_ids spec wrote for batch {part.name}")
    return keys


def read_errors(run_dir: Path) -> dict[str, str]:
    """custom_id -> the reason its request failed in a collected batch."""
    path = batch_dir(run_dir) / ERRORS_FILE
    if not present(path):
        return {}
    try:
        found = json.loads(read_bytes_capped(path))
    except ValueError:
        found = None
    if not isinstance(found, dict) or not all(KEY.fullmatch(k) and isinstance(v, str) for k, v in found.items()):
        raise RunError(f"{path}: not the request errors spec wrote; delete it to send those requests again")
    return found


def write_errors(run_dir: Path, errors: dict[str, str]) -> None:
    """Rewritten whole and atomically at each collection (errors are few; a kill never tears one)."""
    write_atomic(batch_dir(run_dir) / ERRORS_FILE, json.dumps(errors, indent=0, sort_keys=True).encode() + b"\n")


def forget_errors(run_dir: Path) -> None:
    """--retry-failed: the requests that failed in a batch are sent again."""
    (batch_dir(run_dir) / ERRORS_FILE).unlink(missing_ok=True)


def fresh_private_cache(run_dir: Path) -> Path:
    """The response cache of a batch run under --no-cache, where its answers wait until their rows are written;
    emptied at every start, so that no file in the run folder answers a call: the run's collected parts are
    collected again from the provider, under the keys the run computes (parts.py)."""
    path = batch_dir(run_dir) / "responses.sqlite"
    for stale in (path, path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm")):
        try:
            stale.unlink(missing_ok=True)
        except OSError as err:
            raise RunError(f"{stale}: cannot remove the run folder's batch answers ({err.strerror}); move it "
                           "aside and run again") from None
    return path


def refuse_live_run(run_dir: Path) -> None:
    """A live run would send again what the run's open batches are answering (and pay twice)."""
    open_parts = [part for part in read_ledger(run_dir).parts if not part.collected]
    if open_parts:
        raise RunError(f"{run_dir} has {len(open_parts)} batch(es) not collected yet: resume it with --batch "
                       "(add --status to see them, --cancel to stop them)")
