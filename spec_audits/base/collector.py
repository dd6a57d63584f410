"""Python's cyclic garbage collector paused while many objects that hold no cycle to find are made at once."""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """The collector paused, and then left as it was: while a file's rows are built (trees with no cycle, and
    each collection would walk every row built so far: a third of reading 15,000 rows), or a saved parser's
    ~30,000 objects, all kept with it, are loaded."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
