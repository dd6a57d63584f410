"""The family registry: analysis name -> Family. Adding a family is one line in BUILTIN.

Builtin families are imported on first use, so `spec compile` never loads a scorer and no stage pays
for a family it does not meet. Tests register their own families with register()/unregister().

`write_language_docs()` rewrites docs/language.md's table of what each builtin family accepts from their
declarations (tests/families/test_accepts_table.py fails while the two differ, and says how to run it).
"""

from __future__ import annotations

import importlib
from pathlib import Path

from families.interface import Family, accepts_table

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


LANGUAGE_DOCS = Path(__file__).resolve().parents[1] / "docs" / "language.md"
WRITE_COMMAND = 'python -c "from families.registry import write_language_docs; write_language_docs()"'
TABLE_BEGIN = "<!-- generated from each family's declarations (families/registry.py): do not edit -->\n"
TABLE_END = "<!-- end of the generated table -->\n"


def with_accepts_table(docs: str) -> str:
    """The docs text with the table between its markers rewritten from the builtin families' declarations."""
    head, rest = docs.split(TABLE_BEGIN, 1)
    _, tail = rest.split(TABLE_END, 1)
    builtin = [family for name in sorted(BUILTIN) if (family := get(name)) is not None]
    return head + TABLE_BEGIN + accepts_table(builtin) + TABLE_END + tail


def write_language_docs() -> None:
    """Rewrite docs/language.md's table (WRITE_COMMAND runs this)."""
    LANGUAGE_DOCS.write_text(with_accepts_table(LANGUAGE_DOCS.read_text(encoding="utf-8")), encoding="utf-8")
