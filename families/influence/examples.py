"""Demonstrations for items designs: `examples N unused [seed S]` (BBQ's few-shot, App. H.2).

The pool is the rows of the design's data source that its `sample` left out (BBQ's unused variants),
grouped by factor. A cue text then sees `examples`: N pool items of the same factor, drawn per prompt by
a hash of (seed, item, influence, condition, order), each in a random display order and solved for the
cued group (`answer` is the letter of its option).
"""

from __future__ import annotations

import random
from typing import Any

from compiler import nodes as n
from compiler.data_source import Row, read_rows
from compiler.errors import ErrorCollector, Span


def unused_rows(source: n.DataSource, items: list[Row], required: tuple[str, ...], seed: int,
                factor_of: Any, count: int, span: Span, errors: ErrorCollector) -> dict[str, list[Row]] | None:
    """The rows `sample` left out, by factor name; None after reporting a pool too small to draw from."""
    if source.sample is None:
        errors.add(span, f"'examples {count} unused' draws from the rows the data sample leaves out, but data "
                   f"'{source.name}' has no sample", "add 'sample N [per FIELD]' to the data clause")
        return None
    everything = read_rows(source.model_copy(update={"sample": None}), required, seed, errors)
    if everything is None:
        return None
    key = source.key or ""
    used = {row[key] for row in items}
    pool: dict[str, list[Row]] = {}
    for row in everything:
        if row[key] not in used:
            pool.setdefault(factor_of(row).name, []).append(row)
    for factor in sorted({factor_of(row).name for row in items}):
        if len(pool.get(factor, [])) < count:
            errors.add(span, f"'examples {count} unused' needs {count} unused rows of factor '{factor}', "
                       f"the data has {len(pool.get(factor, []))}", "sample fewer rows, or ask for fewer examples")
            return None
    return pool


def demonstrations(pool: list[Row], forms: dict[str, dict[str, str]], target: str, count: int,
                   rng: random.Random) -> list[dict[str, Any]]:
    """`count` solved pool items for a cue toward level `target`, each in a random display order."""
    shown = []
    for row in rng.sample(pool, count):
        letters = "AB" if rng.random() < 0.5 else "BA"
        first, second = ({**forms[row[f"level_{k}"]], "text": row[f"option_{k}"], "option": "AB"[i]}
                         for i, k in enumerate(letters))
        answer = first["option"] if row[f"level_{letters[0]}"] == target else second["option"]
        shown.append({"item": row, "first": first, "second": second, "answer": answer})
    return shown
