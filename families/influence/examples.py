"""Demonstrations for items designs: `examples N unused | block | others [seed S]` (few-shot cues).

`unused` (BBQ, App. H.2): the pool is the rows of the design's data source that its `where` or `sample`
left out (BBQ's unused variants), of the item's factor; it needs grouped factors. `others`
(DailyDilemmas): the pool is the design's other items that name the cued level. A cue text then sees
`examples`: N pool items drawn per prompt by a hash of (seed, item, influence, condition, order), each in
a random display order and solved for the cued level (`answer` is the letter of its option).

`block` draws from the `unused` pool as seed 000's released harness did: one block per (factor, cued
level), the same in every prompt, `random.Random(seed).sample` of the pool rows naming the cued level (in
file order), then each example's display order from the same generator (its data order when
`random() < 0.5`). Both cued levels of a factor get the same examples in the same orders. `block_all`
draws the block from every row of the factor, asked items included, as the release's follow-up probe
re-drew its few-shot blocks.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

from spec_audits.families.influence.clauses import EXAMPLES
from spec_audits.sdk import ErrorCollector, Record, Row, TypedDesign, did_you_mean, first_key, item_rng, read_rows
from spec_audits.sdk import nodes as n

KINDS = ("unused", "block", "block_all", "others")
BLOCKS = ("block", "block_all")
FactorOf = Callable[[Row], Any]


class Pool(Record):
    """Demonstration rows by factor (`unused`) or by level (`others`), and how many to show."""

    kind: str
    rows: dict[str, list[Row]]
    count: int
    seed: int
    key: str

    def draw(self, item: Row, factor: str, target: str, forms: dict[str, dict[str, str]],
             coords: tuple[Any, ...], labels: tuple[str, str] = ("A", "B")) -> list[dict[str, Any]]:
        """`count` solved pool items for the cue toward level `target` on `item`, their options shown with
        `labels`."""
        if self.kind in BLOCKS:
            rng = random.Random(self.seed)
            candidates = [row for row in self.rows[factor] if target in (row["level_A"], row["level_B"])]
        else:
            rng = item_rng(self.seed, "examples", item[self.key], *coords)
            candidates = self.rows[factor] if self.kind == "unused" else [
                row for row in self.rows[target] if row[self.key] != item[self.key]]
        shown = []
        for row in rng.sample(candidates, self.count):
            letters = "AB" if rng.random() < 0.5 else "BA"
            first, second = ({**forms[row[f"level_{k}"]], "text": row[f"option_{k}"], "option": labels[i]}
                             for i, k in enumerate(letters))
            answer = first["option"] if row[f"level_{letters[0]}"] == target else second["option"]
            shown.append({"item": row, "first": first, "second": second, "answer": answer})
        return shown


def resolve_pool(design: TypedDesign, source: n.DataSource, items: list[Row], required: tuple[str, ...],
                 seed: int, factor_of: FactorOf, errors: ErrorCollector) -> Pool | None:
    """The `examples` clause's pool; None after reporting an unknown kind or a pool too small to draw from."""
    value, clause = design.get(EXAMPLES), design.clause(EXAMPLES.keyword)
    if value is None or clause is None:
        return None
    count, kind, own_seed = value
    if kind.name not in KINDS:
        errors.add(kind.span, f"unknown example pool '{kind.name}'", did_you_mean(kind.name, KINDS))
        return None
    if kind.name != "others":
        if not all(lv.group for row in items for lv in factor_of(row).levels):
            errors.add(clause.span, f"'{kind.name}' examples are solved for the cued group, so they need factors "
                       "whose levels are grouped (A, B)", "give each level its group, or draw 'others'")
            return None
        rows = _pool(source, items, required, seed, factor_of, (count, kind.name), clause, errors)
    else:
        rows = _others(items, count, clause, errors)
    if rows is None:
        return None
    return Pool(kind.name, rows, count, own_seed if own_seed is not None else seed, first_key(source))


def _pool(source: n.DataSource, items: list[Row], required: tuple[str, ...], seed: int, factor_of: FactorOf,
          asked: tuple[int, str], clause: n.Clause, errors: ErrorCollector) -> dict[str, list[Row]] | None:
    """The data rows the data clause leaves out (`unused`, `block`), or all of them (`block_all`), by factor."""
    count, kind = asked
    if kind != "block_all" and source.sample is None and source.where is None:
        errors.add(clause.span, f"'examples {count} {kind}' draws from the rows the data clause leaves out, but "
                   f"data '{source.name}' keeps every row",
                   "add 'sample N [per FIELD]' or 'where EXPR' to the data clause")
        return None
    everything = read_rows(n.replaced(source, sample=None, where=None), required, seed, errors)
    if everything is None:
        return None
    used = {row[first_key(source)] for row in items} if kind != "block_all" else set()
    pool: dict[str, list[Row]] = {}
    for row in everything:
        factor = factor_of(row)
        if factor is not None and row[first_key(source)] not in used:
            pool.setdefault(factor.name, []).append(row)
    what = "rows of factor" if kind == "block_all" else "unused rows of factor"
    return _enough(pool, sorted({factor_of(row).name for row in items}), count, count, what, clause, errors)


def _others(items: list[Row], count: int, clause: n.Clause, errors: ErrorCollector) -> dict[str, list[Row]] | None:
    pool: dict[str, list[Row]] = {}
    for row in items:
        for level in {row["level_A"], row["level_B"]}:
            pool.setdefault(level, []).append(row)
    return _enough(pool, sorted(pool), count + 1, count, "items naming level", clause, errors)


def _enough(pool: dict[str, list[Row]], keys: list[str], least: int, count: int, what: str, clause: n.Clause,
            errors: ErrorCollector) -> dict[str, list[Row]] | None:
    """`pool`, unless one of `keys` has fewer than `least` rows (reported)."""
    short = next((key for key in keys if len(pool.get(key, [])) < least), None)
    if short is not None:
        errors.add(clause.span, f"'examples {count}' needs {least} {what} '{short}', the data has "
                   f"{len(pool.get(short, []))}", "sample fewer rows, or ask for fewer examples")
        return None
    return pool
