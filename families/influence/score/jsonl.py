"""Fast column extraction from results.jsonl (1,000,000 lines in a few seconds).

Decoding each line with json.loads costs several µs, so the scalar fields the scorer needs (item_id,
sample, outcome, error) are pulled with one C-level regex findall per field: a `"field":` value and the
rest of its line, so each match consumes one line and the i-th match belongs to line i whenever there
are as many matches as lines. The fast path is taken only when every line holds each key exactly once,
counted over the whole file (a nested or missing key, blank lines or CR line ends send the file to the
exact per-line json.loads parser), so the result is always what json.loads would give. A quote followed
by `:` cannot occur inside a JSON string (quotes there are escaped), so a match is always a real key.
Bad lines follow runner.contract's policy: a torn last line (a killed run's) is left out, any other line
that is not a result row is a ContractError naming the file and line.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from runner.contract import DAMAGED_RESULTS, ContractError, complete_lines

STRING_OR_NULL = rb'(null|"(?:[^"\\]|\\.)*")'
VALUES = {"item_id": STRING_OR_NULL, "sample": rb"(-?\d+)", "outcome": STRING_OR_NULL, "error": STRING_OR_NULL}
KEYS = {field: re.compile(b'"' + field.encode() + rb'"\s*:') for field in VALUES}
VALUE_TO_LINE_END = {
    field: re.compile(KEYS[field].pattern + rb"\s*" + value + rb"[^\n]*\n") for field, value in VALUES.items()
}


def read_result_columns(path: Path, extra: tuple[str, ...] = ()) -> pd.DataFrame:
    """Columns row (line number), item_id, sample, outcome, error (+ `extra` fields, exact parse only)."""
    data = complete_lines(path.read_bytes())[0]
    if not extra:
        fast = _fast(data)
        if fast is not None:
            return fast
    return _exact(path, data, extra)


def _fast(data: bytes) -> pd.DataFrame | None:
    """Every line must hold each field exactly once (as the runner writes them); else None (exact parse)."""
    text = data.rstrip(b"\n") + b"\n"
    if b"\n\n" in text or b"\r" in text or text.startswith(b"\n"):
        return None
    lines = text.count(b"\n")
    columns: dict[str, Any] = {}
    for field, pattern in VALUE_TO_LINE_END.items():
        values = pattern.findall(text)
        if len(values) != lines or len(KEYS[field].findall(text)) != lines:
            return None
        columns[field] = np.array(values, object)
    try:
        frame = pd.DataFrame(
            {
                "row": np.arange(1, lines + 1),
                "item_id": _strings(columns["item_id"]),
                "sample": columns["sample"].astype(np.int64),
                "outcome": _strings(columns["outcome"]),
                "error": _strings(columns["error"]),
            }
        )
    except (TypeError, ValueError):
        return None
    return None if frame["item_id"].isna().any() else frame


def _strings(raw: np.ndarray) -> np.ndarray:
    """JSON string tokens (bytes with quotes) to str; null/absent to None. Decodes each distinct token once."""
    codes, uniques = pd.factorize(raw, use_na_sentinel=True)
    decoded = np.array(
        [None if t == b"null" else json.loads(t) if b"\\" in t else t[1:-1].decode() for t in uniques] + [None], object
    )
    return decoded[codes]


def _exact(path: Path, data: bytes, extra: tuple[str, ...]) -> pd.DataFrame:
    records = []
    for number, line in enumerate(data.decode("utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
            records.append(
                (number, obj["item_id"], int(obj["sample"]), obj.get("outcome"), obj.get("error"))
                + tuple(obj.get(f) for f in extra)
            )
        except (json.JSONDecodeError, KeyError, TypeError, ValueError) as exc:
            raise ContractError(path, f"not a result row ({exc!r})", line=number, fix=DAMAGED_RESULTS) from None
    return pd.DataFrame(records, columns=["row", "item_id", "sample", "outcome", "error", *extra])
