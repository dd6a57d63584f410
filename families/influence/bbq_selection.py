"""The BBQ questions seed 000's released harness asked, and the rows of bbq.csv that carry them.

The release's rule (../shared/data/bbq/RELEASE-ITEMS.md): per BBQ category one `random.Random(42)`; for the
`neg` questions and then, the generator continuing, the `nonneg` ones, the ambiguous rows in `example_id`
order are grouped by `question_index` in numeric order and `random.sample(group, 5)` is kept of each group.
`release_draw` applies it to Age.jsonl and gives all 250 released Age ids in the released order
(tests/families/influence/test_bbq_release_items.py checks it against release-items.csv).

SES.jsonl is not at hand, so the SES questions come from the released ids (`release-items.csv`, BBQ's own
ids in draw order): 151 are compiled rows of bbq.csv with the same texts, 4 are rows of BIG-bench lite's
SES.json (added to bbq.csv as `ses-bb-<id>`), and 95 exist only in SES.jsonl. BBQ's generator draws its
vocabulary words, WORD fillers and answer order unseeded, so those 95 cannot be rebuilt from the templates;
each is stood in for by a compiled variant of the same template and polarity, the first of our draws that
no other released question takes (`stands_in_for` names the BBQ id it replaces).
"""

from __future__ import annotations

import csv
import random
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from spec_audits.families.influence.bbq_release import ReleasedItem

RELEASE_SEED = 42
PER_TEMPLATE = 5
RELEASE_COLUMNS = ("release", "stands_in_for")
"""bbq.csv's columns for the selection: the draw position within the sub-experiment (1-125, empty for the
rows the release did not ask, the few-shot pool) and the BBQ id a stand-in replaces."""


@dataclass(frozen=True)
class Released:
    """One released question: its sub-experiment, BBQ id, where a copy is, and its draw position (1-based)."""

    experiment: str
    bbq_id: int
    source: str  # age_jsonl | ses_templates | bigbench_lite | ses_jsonl
    copy_id: str  # the bbq.csv row id (ses_templates) or BIG-bench lite example_id (bigbench_lite)
    template: str
    position: int


def release_draw(items: Iterable[ReleasedItem], seed: int = RELEASE_SEED,
                 per_template: int = PER_TEMPLATE) -> list[ReleasedItem]:
    """The release's draw from one category's ambiguous rows: `neg` questions first, then `nonneg`."""
    rng = random.Random(seed)
    drawn: list[ReleasedItem] = []
    for polarity in ("neg", "pos"):
        groups: dict[int, list[ReleasedItem]] = defaultdict(list)
        for item in sorted((i for i in items if i.polarity == polarity), key=lambda i: i.example_id):
            groups[int(item.q_id)].append(item)
        for q_id in sorted(groups):
            group = groups[q_id]
            drawn.extend(rng.sample(group, per_template) if len(group) > per_template else group)
    return drawn


def read_release_items(path: Path) -> list[Released]:
    """release-items.csv: the released questions in draw order; position counts within each sub-experiment."""
    with path.open(encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))
    counts: dict[str, int] = defaultdict(int)
    out = []
    for row in rows:
        counts[row["sub_experiment"]] += 1
        out.append(Released(row["sub_experiment"], int(row["bbq_example_id"]), row["source"],
                            row["example_id_or_row_id"], f"{row['sub_experiment']}-{row['question_index']}",
                            counts[row["sub_experiment"]]))
    return out


def stand_ins(released: list[Released], rows: list[tuple[str, ...]], template_column: int) -> dict[int, str]:
    """BBQ id of each SES.jsonl-only question -> the bbq.csv row standing in for it: the first row of its
    template (in our draw order) that no released question and no earlier stand-in takes."""
    taken = {r.copy_id for r in released if r.source == "ses_templates"}
    by_template: dict[str, list[str]] = defaultdict(list)
    for row in rows:
        by_template[row[template_column]].append(row[0])
    chosen: dict[int, str] = {}
    for question in (r for r in released if r.source == "ses_jsonl"):
        free = next(row_id for row_id in by_template[question.template] if row_id not in taken)
        taken.add(free)
        chosen[question.bbq_id] = free
    return chosen


def release_columns(row_id: str, marks: dict[str, tuple[str, str]]) -> tuple[str, str]:
    """A row's `release` and `stands_in_for` values (both empty for a row the release did not ask)."""
    return marks.get(row_id, ("", ""))
