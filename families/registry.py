"""The family registry: analysis name -> Family. Adding a family is one line in BUILTIN.

Builtin families are imported on first use, so `spec compile` never loads a scorer and no stage pays
for a family it does not meet. Tests register their own families with register()/unregister().
"""

from __future__ import annotations

import importlib

from families.interface import Family

BUILTIN: dict[str, str] = {
    "influence_pairs": "families.influence",
    "cue_visibility": "families.cue",
    "bias_decomposition": "families.cognitive_bias",
}
DEFAULT = "influence_pairs"  # the family of a design that declares no analysis
_REGISTERED: dict[str, Family] = {}


def register(family: Family) -> None:
    _REGISTERED[family.name] = family


def unregister(name: str) -> None:
    _REGISTERED.pop(name, None)


def names() -> list[str]:
    return sorted({*BUILTIN, *_REGISTERED})


def get(name: str) -> Family | None:
    """The family registered under `name`, or None when no family has that name."""
    if name not in _REGISTERED and name in BUILTIN:
        _REGISTERED[name] = importlib.import_module(BUILTIN[name]).FAMILY
    return _REGISTERED.get(name)


def all_families() -> list[Family]:
    return [family for name in names() if (family := get(name)) is not None]
