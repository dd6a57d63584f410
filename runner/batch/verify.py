"""A resumed run's batch parts checked against the run before any is used.

The ledger and the key lists in a run folder are read as a stranger's data: a part found there is never
uploaded or submitted as written. After the first pass of a resumed run, each part not yet collected is
compared with the requests that pass derived from the suite and the run's settings (custom_id -> model and
batch line, byte for byte):
- a part not uploaded yet is dropped, and its requests are written again from the suite (it cost nothing);
- a part uploaded but not submitted is submitted only if the file the provider holds is exactly the lines the
  run derives for its keys, else dropped and rebuilt (the provider's copy is never used);
- a submitted part is collected only if the batch's input file (its id asked of the provider, not taken from
  the ledger) holds the run's own line for each key, and only the keys the run computed take its answers;
  a submitted part that holds another request under one of the run's keys is refused, naming it;
- a part holding none of the run's requests is closed without a call: the ledger cannot name a model,
  endpoint or provider that the run would not call.
"""

from __future__ import annotations

from pathlib import Path

from spec_audits.runner.batch.ledger import LEDGER_FILE, Part, batch_dir

Needed = dict[str, tuple[str, bytes]]  # custom_id -> (model, batch line), as the run derives them


def run_keys(part: Part, keys: list[str], needed: Needed) -> set[str]:
    """The keys of `part` that the run computed this pass for the part's own model."""
    return {key for key in keys if key in needed and needed[key][0] == part.model}


def holds_exactly(sent: bytes, keys: list[str], needed: Needed) -> bool:
    """True if `sent` is the run's own lines for `keys`, in order, and nothing else."""
    if any(key not in needed for key in keys):
        return False
    return sent == b"".join(needed[key][1] for key in keys)


def holds_run_lines(sent: bytes, ours: set[str], needed: Needed) -> bool:
    """True if every key of `ours` has the run's own line in `sent` (a line the run did not derive for a key
    it computed would have its answer cached under that key: the part is then refused)."""
    lines = set(sent.splitlines(keepends=True))
    return all(needed[key][1] in lines for key in ours)


def mismatch_message(part: Part, out_dir: Path) -> str:
    return (f"{batch_dir(out_dir) / LEDGER_FILE}: batch {part.name} ({part.batch_id}, {part.model}) does not hold "
            "the requests this run derives from its suite and settings; its answers are not used. Cancel it with "
            "--cancel if it is still open, then run into a new --out (or delete that folder's batches/)")
