"""Per-item randomness: every item gets its own RNG from a hash of (seed, coordinates).

Never one global stream, so adding a factor, a dilemma or a data row does not reshuffle the others.
"""

from __future__ import annotations

import hashlib
import json
import random
from typing import Any

Coords = tuple[str | int, ...]


def canonical_json(obj: Any) -> str:
    """Keys sorted, no spaces, UTF-8: the one serialisation behind ids and seeds."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def item_rng(seed: int, *coords: Any) -> random.Random:
    """An RNG that depends only on the seed and the item's coordinates."""
    digest = hashlib.sha256(canonical_json([seed, *coords]).encode()).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))
