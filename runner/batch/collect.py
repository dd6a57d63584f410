"""A finished batch's output and error files read into what a live call would have given: the cache value of
every request answered, the reason of every request that failed.

Both files are the provider's data: a line that names no custom_id of this batch is ignored, a reply that is
not a chat completion fails its own request, and a request the files do not mention fails with the batch's
state, so every request of a batch comes out answered or failed."""

from __future__ import annotations

import json
from typing import Any

from spec_audits.base.secrets import scrub
from spec_audits.runner.call import extract

_REASON_CHARS = 240
TWICE = "batch request failed: the batch output answers this request twice; neither answer is used"


def plain(text: str) -> str:
    """A provider's message as one line of printable text, secrets scrubbed, cut short."""
    text = "".join(ch if ch.isprintable() else " " for ch in text)
    return scrub(" ".join(text.split()))[:_REASON_CHARS]


def _error_text(error: Any) -> str:
    if isinstance(error, dict):
        error = error.get("error", error)
        if isinstance(error, dict):
            code, message = error.get("code"), error.get("message")
            return f"{code}: {message}" if code and message else str(message or code or error)
    return str(error)


def _value(body: Any) -> dict[str, Any] | str:
    """The cache value of a chat.completion body, or why it is none."""
    try:
        value = extract(body)
    except (KeyError, IndexError, TypeError, AttributeError, ValueError):
        return "the batch's reply is not a chat completion"
    text, top = value["text"], value["top_logprobs"]
    if (text is not None and not isinstance(text, str)) or (top and not all(isinstance(e["token"], str) for e in top)):
        return "the batch's reply is not a chat completion"
    if not text and not top:
        return "the model returned no content"
    return value


def outcome(entry: dict[str, Any]) -> dict[str, Any] | str:
    """One output or error line: the cache value, or the reason the request failed."""
    if entry.get("error"):
        return plain(f"batch request failed: {_error_text(entry['error'])}")
    response = entry.get("response")
    if not isinstance(response, dict):
        return "batch request failed: no response"
    status = response.get("status_code")
    if status != 200:
        return plain(f"batch request failed (HTTP {status}): {_error_text(response.get('body'))}")
    found = _value(response.get("body"))
    return found if isinstance(found, dict) else plain(f"batch request failed: {found}")


def read_outcomes(data: bytes, keys: set[str]) -> tuple[dict[str, dict[str, Any]], dict[str, str]]:
    """(key -> cache value, key -> reason) for the lines of `data` naming one of `keys`; an answer beats a
    failure of the same request, and a request answered twice is failed (neither answer is used)."""
    values: dict[str, dict[str, Any]] = {}
    errors: dict[str, str] = {}
    twice: set[str] = set()
    for line in data.splitlines():
        try:
            entry = json.loads(line)
        except (ValueError, RecursionError):
            continue  # no custom_id can be read from it: its request is reported missing
        key = entry.get("custom_id") if isinstance(entry, dict) else None
        if not isinstance(key, str) or key not in keys or key in twice:
            continue
        found = outcome(entry)
        if isinstance(found, dict) and key in values:
            twice.add(key)
            del values[key]
            errors[key] = TWICE
        elif isinstance(found, dict):
            values[key] = found
            errors.pop(key, None)
        elif key not in values:
            errors[key] = found
    return values, errors
