"""The scored columns of results.jsonl, read fast (1,000,000 lines in about half a second).

json.loads costs several µs a line, most of it building fields the scorer never reads, so msgspec
decodes every line into a typed struct of only the fields scored or checked (item_id, sample, outcome,
error, model, answer, and logprobs in a logprob run) and skips the rest in C. Whatever it refuses goes
to the exact per-line json.loads parser, which gives the same columns: a value of another type than the runner writes (a
float sample, a number as outcome), blank lines (msgspec would skip them and shift the line numbers),
and a line that is not a result row, which the exact parser reports as a ContractError naming the file
and line. A torn last line (a killed run's) is left out, as spec_audits.contract.reader does.
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
    IdLookup,
    complete_lines,
    open_regular,
    present,
    read_bytes_capped,
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


def read_result_columns(path: Path, logprobs: bool = False, lookup: IdLookup | None = None) -> pd.DataFrame:
    """Columns row (line number), item_id, sample, outcome, error, model, answer (+ logprobs). The fast
    path gives the text columns as categoricals (each distinct value once). Given the suite's ids (`lookup`),
    the fast path looks each piece's item ids up by their hashes as it goes, so that item_id's codes are the rows'
    positions in the suite (its categories 0, 1, ..., then any ids the suite lacks): no row's id text is held."""
    if not present(path):
        raise FileNotFoundError(path)
    fast = _fast(path, logprobs, _IdCodes(lookup) if lookup is not None else None)
    return fast if fast is not None else _exact(path, complete_lines(read_bytes_capped(path))[0], logprobs)


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


class _IdCodes:
    """Item ids as positions in the suite, a piece at a time; ids the suite lacks get codes after them."""

    def __init__(self, lookup: IdLookup) -> None:
        self.lookup = lookup
        self.extra: dict[str, int] = {}
        self.codes: list[np.ndarray] = []

    def add(self, item_ids: list[str]) -> None:
        found = self.lookup.positions(item_ids)
        for index in np.flatnonzero(found < 0).tolist():
            found[index] = self.extra.setdefault(item_ids[index], len(self.lookup) + len(self.extra))
        self.codes.append(found)

    def column(self) -> pd.Categorical:
        codes = np.concatenate(self.codes) if self.codes else np.zeros(0, np.int64)
        names: pd.Index = pd.RangeIndex(len(self.lookup))
        if self.extra:  # only to name an unknown id in the error: the positions are then held one object each
            names = names.append(pd.Index(list(self.extra), dtype=object))
        return pd.Categorical.from_codes(codes, categories=names)


def _fast(path: Path, logprobs: bool, ids: _IdCodes | None = None) -> pd.DataFrame | None:
    """The columns decoded by msgspec a piece at a time, or None for the exact parser."""
    if not FAST:
        return None
    names = ["item_id", "logprobs"]
    values: dict[str, list[Any]] = {name: [] for name in names}
    texts = {name: _TextCodes() for name in ("outcome", "error", "model", "answer")}
    samples: list[np.ndarray] = []
    for chunk in _chunks(path):
        try:
            rows = _DECODERS[logprobs].decode_lines(chunk)
        except (msgspec.DecodeError, msgspec.ValidationError):
            return None
        if len(rows) != chunk.count(b"\n"):
            return None  # a blank line: its line number would be lost
        samples.append(np.fromiter((r.sample for r in rows), np.int64, len(rows)))
        if ids is not None:
            ids.add([r.item_id for r in rows])
        else:
            values["item_id"] += [r.item_id for r in rows]
        for name, codes in texts.items():
            codes.add([getattr(r, name) for r in rows])
        if logprobs:
            values["logprobs"] += [r.logprobs for r in rows]
    sample = np.concatenate(samples) if samples else np.zeros(0, np.int64)
    columns: dict[str, Any] = {
        "row": np.arange(1, len(sample) + 1),
        "item_id": _categorical(values.pop("item_id")) if ids is None else ids.column(),
        "sample": sample,
        **{name: codes.column() for name, codes in texts.items()},
    }
    if logprobs:
        columns["logprobs"] = values.pop("logprobs")
    return pd.DataFrame(columns)


def _categorical(values: list[str | None]) -> pd.Categorical:
    """Strings (None for missing) as a categorical: hashed once each, never copied into a string array."""
    codes, names = pd.factorize(np.array(values, object))
    return pd.Categorical.from_codes(codes, categories=pd.Index(names, dtype=object))


class _TextCodes:
    """A text column (None for missing) coded a piece at a time, codes in first-seen order as pandas.factorize
    gives them: each distinct text held once, a 4-byte code a row (msgspec makes a string per row)."""

    def __init__(self) -> None:
        self.table: dict[str, int] = {}
        self.codes: list[np.ndarray] = []

    def add(self, texts: list[str | None]) -> None:
        table = self.table
        self.codes.append(np.fromiter((-1 if text is None else table.setdefault(text, len(table)) for text in texts),
                                      np.int32, len(texts)))

    def column(self) -> pd.Categorical:
        codes = np.concatenate(self.codes) if self.codes else np.zeros(0, np.int32)
        return pd.Categorical.from_codes(codes, categories=pd.Index(list(self.table), dtype=object))


def _exact(path: Path, data: bytes, logprobs: bool) -> pd.DataFrame:
    records = []
    for number, line in enumerate(data.split(b"\n"), start=1):
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
