"""Per-item randomness: every item gets its own RNG from a hash of (seed, coordinates)."""

from __future__ import annotations

import hashlib
import json
import random

Coords = tuple[str | int, ...]


def item_rng(seed: int, coords: Coords) -> random.Random:
    """An RNG that depends only on the spec seed and the item's coordinates (no shared stream)."""
    key = json.dumps([seed, list(coords)], separators=(",", ":")).encode()
    return random.Random(int.from_bytes(hashlib.sha256(key).digest()[:16], "big"))
