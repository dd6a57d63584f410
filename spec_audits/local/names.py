"""How a model name selects the embedded model (`local/...`), and the switch that makes it talk."""

from __future__ import annotations

LOCAL_PREFIX = "local/"
VERBOSE_ENV = "SPEC_LOCAL_VERBOSE"  # "1": llama.cpp logs what it does while the embedded model loads


def is_local(model: str) -> bool:
    """True for the embedded in-process models (`local/gemma-3-270m`, `local/<path.gguf>`)."""
    return model.startswith(LOCAL_PREFIX)
