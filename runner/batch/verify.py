"""A resumed run's batch parts checked against the run before any is used.

The ledger and the key lists in a run folder are read as a stranger's data: a part found there is never
uploaded or submitted as written, and no batch's input file is downloaded to check it (OpenAI limits which
files may be downloaded). Instead every batch spec creates carries, in the provider's own batch record, the
sha256 of exactly the file it was made of and the model it calls (`metadata`). After the first pass of a
resumed run, each part not yet collected is compared with the requests that pass derived from the suite and
the run's settings (custom_id -> model and batch line):
- a part not uploaded yet is dropped, and its requests are written again from the suite (it cost nothing);
- a part uploaded but not submitted is uploaded again from the lines the run derives and submitted (files
  cost nothing), unless the provider already holds a batch made of its file whose digest is those lines'
  (a create that reached the provider just before a kill): that batch is polled, never made twice;
- a submitted part is collected only if its batch (asked of the provider by the id the ledger gives) carries
  the digest of the run's own lines for all of the part's keys, in order; any other batch, or one carrying
  no digest, is refused, naming it, and none of its answers is cached;
- a part holding none of the run's requests is closed without a call: the ledger cannot name a model,
  endpoint or provider that the run would not call.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from spec_audits.runner.batch.ledger import LEDGER_FILE, Part, batch_dir

Needed = dict[str, tuple[str, bytes]]  # custom_id -> (model, batch line), as the run derives them
DIGEST = "spec_sha256"
MODEL = "spec_model"


def run_keys(part: Part, keys: list[str], needed: Needed) -> set[str]:
    """The keys of `part` that the run computed this pass for the part's own model."""
    return {key for key in keys if key in needed and needed[key][0] == part.model}


def run_lines(part: Part, keys: list[str], needed: Needed) -> bytes | None:
    """The run's own lines for all of `keys`, in order; None unless the run derived every one for the part's
    model, each once (a batch of other lines is not the run's, whatever its ledger says)."""
    if len(run_keys(part, keys, needed)) != len(keys):
        return None
    return b"".join(needed[key][1] for key in keys)


def batch_metadata(part: Part, data: bytes) -> dict[str, str]:
    """What a batch made of `data` for `part` records of itself at the provider (OpenAI: 16 keys, values
    of at most 512 characters)."""
    return {"spec_part": part.name, MODEL: part.model, DIGEST: hashlib.sha256(data).hexdigest()}


def made_of(batch: Any, expected: dict[str, str]) -> bool:
    """True if the provider's `batch` records the digest and model of `expected` (batch_metadata's)."""
    found = getattr(batch, "metadata", None)
    return isinstance(found, dict) and all(found.get(name) == expected[name] for name in (DIGEST, MODEL))


def mismatch_message(part: Part, out_dir: Path) -> str:
    return (f"{batch_dir(out_dir) / LEDGER_FILE}: batch {part.name} ({part.batch_id}, {part.model}) does not hold "
            "the requests this run derives from its suite and settings; its answers are not used. Cancel it with "
            "--cancel if it is still open, then run into a new --out (or delete that folder's batches/)")
