"""Per-item randomness: every item gets its own RNG from a hash of (seed, coordinates).

Never one global stream, so adding a factor, a dilemma or a data row does not reshuffle the others.
"""

from __future__ import annotations

import hashlib
import json
import random
from collections.abc import Callable
from typing import Any

Coords = tuple[str | int, ...]


_ENCODER = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _c_encoder() -> Callable[[Any, int], list[str]] | None:
    """json's C encoder with those options, built once: json.dumps builds one (and a JSONEncoder) per call,
    a third of the cost of serialising a suite row. None where the C accelerator is missing."""
    make = getattr(json.encoder, "c_make_encoder", None)
    if make is None:
        return None
    try:  # markers None: no circularity check, rows are trees
        encoder: Callable[[Any, int], list[str]] = make(
            None, _ENCODER.default, json.encoder.encode_basestring, None, ":", ",", True, False, True)
    except TypeError:  # another interpreter's signature
        return None
    return encoder


_C_ENCODER = _c_encoder()


def canonical_json(obj: Any) -> str:
    """Keys sorted, no spaces, UTF-8: the one serialisation behind ids and seeds."""
    if _C_ENCODER is None:
        return _ENCODER.encode(obj)
    return "".join(_C_ENCODER(obj, 0))


def item_rng(seed: int, *coords: Any) -> random.Random:
    """An RNG that depends only on the seed and the item's coordinates."""
    digest = hashlib.sha256(canonical_json([seed, *coords]).encode()).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))
