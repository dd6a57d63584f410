"""Batch files: one line per call whose custom_id is the call's response-cache key, cut into files by the
provider's request and byte limits."""

from __future__ import annotations

import json
from typing import Any

from spec_audits.runner.batch.providers import BATCH_URL

Line = tuple[str, bytes]  # (custom_id, the line with its newline)


def request_line(key: str, body: dict[str, Any]) -> bytes:
    record = {"custom_id": key, "method": "POST", "url": BATCH_URL, "body": body}
    return json.dumps(record, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"


def split_lines(lines: list[Line], max_requests: int, max_bytes: int) -> list[list[Line]]:
    """Consecutive runs of `lines`, each within both limits (a single line over the byte limit goes alone:
    the provider then refuses that one file, and says why)."""
    files: list[list[Line]] = []
    current: list[Line] = []
    size = 0
    for key, line in lines:
        if current and (len(current) >= max_requests or size + len(line) > max_bytes):
            files.append(current)
            current, size = [], 0
        current.append((key, line))
        size += len(line)
    if current:
        files.append(current)
    return files
