"""Keys never written or printed: the one scrubber of every credential litellm may read from the environment.

A credential variable is one whose name has a part (split at `_`) that names a secret: KEY, APIKEY,
ZENAPIKEY, TOKEN, SECRET, PASSWORD, PASSWD, CREDENTIAL(S), JWT (OPENAI_API_KEY, AWS_SECRET_ACCESS_KEY,
AWS_SESSION_TOKEN, AWS_BEARER_TOKEN_BEDROCK, AZURE_AD_TOKEN, WATSONX_APIKEY, VERTEXAI_CREDENTIALS, ...),
unless its last part says it holds no secret but where one is (..._FILE, ..._URL, ..._ENABLED, ...).
`scrub` replaces in a provider's error message (and `scrub_text` in any other text we write or print):

* the value of every credential variable: one of 8 characters or more wherever it appears; a shorter one
  (a placeholder such as `test` or `x`, or a short key), in an error message, wherever it stands as a
  word of its own;
* what follows an Authorization, Proxy-Authorization, api-key or x-api-key header name, and a Bearer token
  (a word holding a digit or a symbol), whatever the key;
* a URL's user name and password; in an error message also its path parameters (`;token=...`), query and
  fragment.

`scrub_text` leaves a short value where it stands as a word (a placeholder key `test` must not eat the word
from every answer, path and message) and a URL's query (a model's answer may cite one). A server echoing the
Authorization header is still caught by the header forms, so the key is never stored, whatever its length.
"""

from __future__ import annotations

import functools
import json
import os
import re
from collections.abc import Mapping
from typing import Any

MASK = "***"
LONG = 8  # characters from which a value is scrubbed wherever it appears, not only as a word
_SECRET_PARTS = frozenset({"KEY", "APIKEY", "ZENAPIKEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL",
                           "CREDENTIALS", "JWT"})
_NO_SECRET_TAILS = frozenset({"FILE", "DIR", "PATH", "URL", "URI", "ENDPOINT", "HOST", "PORT", "ENABLED", "VERSION",
                              "NAME", "INTERVAL", "PERIOD", "NAMESPACE", "ALIAS", "BASE", "MODE", "TYPE"})
# compiled where first needed (`_pattern`): most texts hold none of their words, and `spec check` prints only such
_HEADER = (r"""(?i)\b((?:proxy-)?authorization|x-api-key|api-key)(["']?\s*[:=]\s*["']?)"""
           r"""(?:(bearer|basic|token)\s+)?[^\s"',;}\]]+""")
_TOKEN = r"\b(Bearer|BEARER|bearer)\s+(?=[A-Za-z0-9._~+/=-]*[0-9._~+/=-])[A-Za-z0-9._~+/=-]+"
_USERINFO = r"(?<=://)[^/\s@]+@"
_PARAMS = r"(://[^\s;?#]*);[^\s?#'\"]*"
_QUERY = r"(://[^\s?#]*)\?[^\s#'\"]*"
_FRAGMENT = r"(://[^\s#]*)#[^\s'\"]*"


@functools.cache
def _pattern(text: str) -> re.Pattern[str]:
    return re.compile(text)


@functools.lru_cache(maxsize=4096)
def is_credential(name: str) -> bool:
    """Whether an environment variable of this name holds a credential litellm may send."""
    parts = name.upper().split("_")
    return bool(_SECRET_PARTS.intersection(parts)) and parts[-1] not in _NO_SECRET_TAILS


def credential_values(environ: Mapping[str, str] | None = None) -> frozenset[str]:
    """The values of every credential variable of the environment (os.environ by default), blank ones left out."""
    if environ is not None:
        return _values(environ)
    encoded = getattr(os.environ, "_data", None)  # os._Environ's encoded copy: compared at C speed, not decoded
    if encoded is None:
        return _values(os.environ)
    if _seen.get("encoded") != encoded:
        _seen.update(encoded=dict(encoded), values=_values(os.environ))
    values: frozenset[str] = _seen["values"]
    return values


_seen: dict[str, Any] = {}  # the environment last read and its credential values (a scrub per written row)


def _values(environ: Mapping[str, str]) -> frozenset[str]:
    return frozenset(value for name, value in environ.items() if value.strip() and is_credential(name))


@functools.lru_cache(maxsize=16)
def _patterns(values: frozenset[str]) -> tuple[re.Pattern[str] | None, re.Pattern[str] | None]:
    """(long values anywhere, short values as words), each value also as JSON writes it inside a string."""
    forms = {form for value in values for form in (value, json.dumps(value, ensure_ascii=False)[1:-1])}
    long = sorted((f for f in forms if len(f) >= LONG), key=len, reverse=True)
    short = sorted((f for f in forms if len(f) < LONG), key=len, reverse=True)
    anywhere = re.compile("|".join(map(re.escape, long))) if long else None
    words = re.compile(rf"(?<![A-Za-z0-9])(?:{'|'.join(map(re.escape, short))})(?![A-Za-z0-9])") if short else None
    return anywhere, words


def scrub(text: str) -> str:
    """A provider's error message (or a URL we show) with every credential, header value and URL secret
    replaced by ***."""
    return _scrubbed(text, message=True)


def scrub_text(text: str) -> str:
    """Text we write or print that is no provider's error message (a reply, a setting, a line): every long
    credential value, header value and URL user info replaced by ***; a short value left where it stands as a
    word, and a URL's query kept (a reply may cite one), see the module's doc."""
    return _scrubbed(text, message=False)


def _scrubbed(text: str, *, message: bool) -> str:
    anywhere, short = _patterns(credential_values())
    if anywhere is not None:
        text = anywhere.sub(MASK, text)
    if message and short is not None:
        text = short.sub(MASK, text)
    lowered = text.lower()  # the patterns run only where their words are (a scrub per written row)
    if "authoriz" in lowered or "api-key" in lowered:
        text = _pattern(_HEADER).sub(_header, text)
    if "bearer" in lowered:
        text = _pattern(_TOKEN).sub(rf"\1 {MASK}", text)
    if "://" in text:
        text = _pattern(_USERINFO).sub(f"{MASK}@", text)
    if "://" in text and message:
        text = _pattern(_QUERY).sub(rf"\1?{MASK}", _pattern(_PARAMS).sub(rf"\1;{MASK}", text))
        text = _pattern(_FRAGMENT).sub(rf"\1#{MASK}", text)
    return text


def _header(match: re.Match[str]) -> str:
    scheme = f"{match.group(3)} " if match.group(3) else ""
    return f"{match.group(1)}{match.group(2)}{scheme}{MASK}"


def scrubbed(value: Any) -> Any:
    """A JSON value with every string inside it scrubbed as text (object keys kept)."""
    if isinstance(value, str):
        return scrub_text(value)
    if isinstance(value, dict):
        return {key: scrubbed(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [scrubbed(item) for item in value]
    return value
