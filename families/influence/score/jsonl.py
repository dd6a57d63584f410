"""The scored columns of results.jsonl, read fast (1,000,000 lines in about half a second).

json.loads costs several µs a line, most of it building fields the scorer never reads, so msgspec
decodes every line into a typed struct of only the fields scored or checked (item_id, sample, outcome,
error, model, answer, and logprobs in a logprob run) and skips the rest in C, a piece of the file at a
time (`result_pieces`). A piece it refuses goes to the exact per-line json.loads parser, which gives the
same columns: a value of another type than the runner writes (a float sample, a number as outcome),
blank lines (msgspec would skip them and shift the line numbers), and a line that is not a result row,
which the exact parser reports as a ContractError naming the file and line.
A torn last line (a killed run's) is left out, as spec_audits.contract.reader does.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any

import numpy as np
import pandas as pd

from spec_audits.sdk import (
    DAMAGED_RESULTS,
    ContractError,
    open_regular,
    present,
)

try:
    import msgspec

    FAST = True
except ImportError:  # an environment installed before msgspec was a dependency: every file is read exactly
    FAST = False

COLUMNS = ["row", "item_id", "sample", "outcome", "error", "model", "answer"]
CHUNK = 8 << 20  # bytes of results.jsonl decoded at a time
MAX_SAMPLE = 2**63 - 1  # a sample index past this is no index (and past numpy's int64): the exact parser names it

if FAST:
    class _Scored(msgspec.Struct, gc=False):
        """The fields of a result row that scoring reads or checks; msgspec skips the others."""

        item_id: str
        sample: Annotated[int, msgspec.Meta(ge=0, le=MAX_SAMPLE)]
        outcome: str | None = None
        error: str | None = None
        model: str | None = None  # checked against run.json (runner/result_checks.py), like answer
        answer: str | None = None

    class _ScoredLogprobs(_Scored, gc=False):
        logprobs: dict[str, float] | None = None

    _DECODERS: dict[bool, msgspec.json.Decoder[Any]] = {
        False: msgspec.json.Decoder(_Scored), True: msgspec.json.Decoder(_ScoredLogprobs)}


def result_pieces(path: Path, logprobs: bool = False) -> Iterator[pd.DataFrame]:
    """Columns row (line number), item_id, sample, outcome, error, model, answer (+ logprobs) of about CHUNK bytes of
    lines at a time, so that a scorer can check and sum each piece and let it go: no column of the whole file is ever
    held. A piece msgspec refuses is read the exact way, with its lines' numbers in the file."""
    if not present(path):
        raise FileNotFoundError(path)
    line = 1
    for chunk in _chunks(path):
        fast = _fast(chunk, logprobs, line)
        yield fast if fast is not None else _exact(path, chunk, logprobs, line)
        line += chunk.count(b"\n")


def _chunks(path: Path) -> Iterator[bytes]:
    """The file's complete lines in pieces of about CHUNK bytes, each ending at a line's end (a torn last line is
    left out), so that neither the file nor its decoded rows are ever held whole."""
    rest = b""
    with open_regular(path) as data:
        while piece := data.read(CHUNK):
            piece = rest + piece
            end = piece.rfind(b"\n") + 1
            rest = piece[end:]
            if end:
                yield piece[:end]


def _fast(chunk: bytes, logprobs: bool, line: int) -> pd.DataFrame | None:
    """A piece's columns decoded by msgspec (its first line's number `line`), or None for the exact parser."""
    if not FAST:
        return None
    try:
        rows = _DECODERS[logprobs].decode_lines(chunk)
    except (msgspec.DecodeError, msgspec.ValidationError):
        return None
    if len(rows) != chunk.count(b"\n"):
        return None  # a blank line: its line number would be lost
    columns: dict[str, Any] = {
        "row": np.arange(line, line + len(rows)),
        "item_id": _texts([r.item_id for r in rows]),
        "sample": np.fromiter((r.sample for r in rows), np.int64, len(rows)),
        **{name: _texts([getattr(r, name) for r in rows]) for name in ("outcome", "error", "model", "answer")},
    }
    if logprobs:
        columns["logprobs"] = [r.logprobs for r in rows]
    return pd.DataFrame(columns)


def _texts(values: list[str | None]) -> pd.Series:
    """Texts as Python objects: pandas would otherwise copy them into an arrow string array, whose memory pool keeps
    what it once held."""
    return pd.Series(values, dtype=object)


def _exact(path: Path, data: bytes, logprobs: bool, first: int = 1) -> pd.DataFrame:
    """The columns of `data`'s lines (the first of them line `first` of the file) by json.loads, naming a bad line."""
    records = []
    for number, line in enumerate(data.split(b"\n"), start=first):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
            sample = int(obj["sample"])
            if not 0 <= sample <= MAX_SAMPLE:
                raise ValueError(f"sample {sample} is no sample index")
            records.append((number, obj["item_id"], sample, obj.get("outcome"), obj.get("error"),
                            obj.get("model"), obj.get("answer"))
                           + ((obj.get("logprobs"),) if logprobs else ()))
        except (json.JSONDecodeError, KeyError, TypeError, ValueError) as exc:
            raise ContractError(path, f"not a result row ({exc!r})", line=number, fix=DAMAGED_RESULTS) from None
    return pd.DataFrame(records, columns=COLUMNS + (["logprobs"] if logprobs else []))
