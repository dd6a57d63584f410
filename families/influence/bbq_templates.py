"""BBQ's generation templates compiled into ambiguous-context items (Age and SES).

Reads BBQ's `templates/new_templates - <Category>.csv` with `vocabulary.csv` and
`vocabulary_proper_names.csv` and fills them the way BBQ's released generator does:

* NAME1/NAME2 come from the row's `Names` column (every NAME1 with every NAME2, in that order); a row
  without one takes a `Proper_nouns_only` row's first names (those BBQ marks `first_only`), or the
  category vocabulary of its `Subcategory` (SES occupations), paired across the two `Info` levels.
  Proper-name and occupation rows are also asked with the two names swapped.
* WORD1/WORD2 come from `Lexical_diversity`, one word per slot; a row without that column entry keeps
  its WORD slots unfilled.
* "a" becomes "an" before a vowel-initial word wherever it follows a space, but only when one of the two
  names starts with a vowel; contexts and questions are stripped, answers are not.

Every variant is one (template row, NAME1, NAME2, WORD1, WORD2). Two things differ from BBQ's generator
on purpose: a group tag follows its slot (BBQ's swapped proper-name rows keep each name's tag from the
unswapped row, so half of them tag the low-income friend highSES, and BBQ looks an answer's tag up by
its name, which misses "an one percenter"), and BBQ's unseeded draws (which
vocabulary words, which WORD per pair, the answer order) are seeded here. `variants` is the whole space
the draws come from; `drawn_variants` makes the draws, with BBQ's sizes.
"""

from __future__ import annotations

import argparse
import csv
import itertools
import re
import sys
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from random import Random

from spec_audits.families.influence.bbq_release import ReleasedItem, ReleaseError, read_bigbench, read_jsonl
from spec_audits.families.influence.bbq_selection import (
    RELEASE_COLUMNS,
    Released,
    read_release_items,
    release_columns,
    release_draw,
    stand_ins,
)
from spec_audits.sdk import item_rng

TEXTS = {"context": "Ambiguous_Context", "question_neg": "Question_negative_stereotype",
         "question_pos": "Question_non_negative", "answer_neg": "Answer_negative", "answer_pos": "Answer_non_negative"}
SLOT_LIST = re.compile(r"\s*(?:\{\{)?(NAME|WORD)([12])(?:\}\})?:\s*\[(.*)\]\s*")
AN = re.compile(r"(\s[aA])(\s[aAeEiIoOuU])")
OCCUPATION_SAMPLE, NAME_SAMPLE = 5, 6
"""How many vocabulary words (occupations) and first names BBQ's generator draws per template row."""


class TemplateError(ValueError):
    """A template or vocabulary row the compiler cannot read; the message names the file and row."""


@dataclass(frozen=True, eq=False)
class Template:
    """One row of a BBQ template file (its ambiguous-context side)."""

    where: str  # "file: row N", for messages
    category: str
    q_id: str
    version: str
    subcategory: str
    proper_names: bool
    texts: dict[str, str]  # TEXTS' keys -> the row's text with its {{SLOTS}}
    names: tuple[tuple[str, ...], tuple[str, ...]] | None
    words: tuple[tuple[str, ...], tuple[str, ...]] | None
    info: tuple[str, str]  # NAME1_info, NAME2_info


@dataclass(frozen=True)
class Vocabulary:
    words: dict[tuple[str, str], list[tuple[str, str]]]  # (category, subcategory) -> [(word, Info)]
    first_names: list[str]  # the first names without an ethnicity (`first_only`)


@dataclass(frozen=True)
class Variant:
    template: Template
    name1: str
    name2: str
    info1: str
    info2: str
    word1: str = ""
    word2: str = ""


@dataclass(frozen=True)
class Item:
    """An ambiguous-context item: one context, a question per polarity, two answers with their group tags
    (the negative question's answer first)."""

    variant: Variant
    context: str
    questions: dict[str, str]  # "neg" / "pos" -> question
    answers: tuple[tuple[str, str], tuple[str, str]]  # (text, tag)


def read_templates(path: Path) -> list[Template]:
    """The rows of a template file that have an ambiguous context."""
    with path.open(encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))
    out = []
    for number, row in enumerate(rows, start=2):
        where = f"{path}: row {number}"
        try:
            if row["Ambiguous_Context"]:
                out.append(_template(row, where))
        except KeyError as exc:
            raise TemplateError(f"{where}: no column {exc}; is this one of BBQ's template files?") from None
    return out


def _template(row: dict[str, str], where: str) -> Template:
    return Template(where=where, category=row["Category"], q_id=row["Q_id"], version=row["version"],
                    subcategory=row.get("Subcategory", ""), proper_names=row.get("Proper_nouns_only") == "TRUE",
                    texts={key: row[column] for key, column in TEXTS.items()},
                    names=slot_lists(row["Names"], "NAME", where) if row["Names"] else None,
                    words=slot_lists(row["Lexical_diversity"], "WORD", where) if row["Lexical_diversity"] else None,
                    info=(row["NAME1_info"], row["NAME2_info"]))


def slot_lists(text: str, kind: str, where: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """`NAME1: [a, b]; NAME2: [c, d]` (or `{{NAME1}}: ...`, `WORD1: ...`) -> the two lists; a missing
    second list is empty."""
    lists: dict[str, tuple[str, ...]] = {"1": (), "2": ()}
    for part in text.split(";"):
        match = SLOT_LIST.fullmatch(part)
        if match is None or match[1] != kind:
            raise TemplateError(f"{where}: cannot read '{part.strip()}' as '{kind}1: [word, word, ...]'; write the "
                                f"lists as {kind}1: [...]; {kind}2: [...]")
        lists[match[2]] = tuple(word.strip() for word in match[3].split(","))
    return lists["1"], lists["2"]


def read_vocabulary(folder: Path) -> Vocabulary:
    """BBQ's vocabulary (rows with `Pilot_include` "No" left out) and its proper names."""
    words: dict[tuple[str, str], list[tuple[str, str]]] = {}
    with (folder / "vocabulary.csv").open(encoding="utf-8", newline="") as handle:
        for row in csv.DictReader(handle):
            if row["Pilot_include"] != "No":
                words.setdefault((row["Category"], row["SubCat"]), []).append((row["Name"], row["Info"]))
    with (folder / "vocabulary_proper_names.csv").open(encoding="utf-8", newline="") as handle:
        first = [row["Name"] for row in csv.DictReader(handle) if row["First_last"] == "first_only"]
    return Vocabulary(words=words, first_names=first)


def fill(variant: Variant) -> Item:
    """The variant's ambiguous-context item, its texts as BBQ's generator writes them."""
    t = variant.template
    vowel = any(re.match("[aeiou]", name.lower()) for name in (variant.name1, variant.name2))

    def slotted(text: str) -> str:
        text = text.replace("{{NAME1}}", variant.name1).replace("{{NAME2}}", variant.name2)
        if t.words is not None:
            text = text.replace("{{WORD1}}", variant.word1).replace("{{WORD2}}", variant.word2)
        return AN.sub(r"\1n\2", text) if vowel else text

    texts = {key: slotted(text) for key, text in t.texts.items()}
    answers = ((texts["answer_neg"], _tag(variant, "answer_neg")), (texts["answer_pos"], _tag(variant, "answer_pos")))
    return Item(variant=variant, context=texts["context"].strip(), answers=answers,
                questions={p: texts[f"question_{p}"].strip() for p in ("neg", "pos")})


def _tag(variant: Variant, key: str) -> str:
    text = variant.template.texts[key]
    slots = [slot for slot in ("1", "2") if "{{NAME" + slot + "}}" in text]
    if len(slots) != 1:
        raise TemplateError(f"{variant.template.where}: {TEXTS[key]} '{text}' names {len(slots)} of the slots "
                            "{{NAME1}}, {{NAME2}}; each answer names exactly one")
    return variant.info1 if slots == ["1"] else variant.info2


def variants(template: Template, vocabulary: Vocabulary) -> Iterator[Variant]:
    """Every variant BBQ's generator can draw from this row: all name pairs, all word choices."""
    for pair in _pairs(template, vocabulary, _names(template, vocabulary, None)):
        for word1, word2 in itertools.product(*_word_lists(template)):
            yield Variant(template, *pair, word1=word1, word2=word2)


def drawn_variants(template: Template, vocabulary: Vocabulary, seed: int) -> Iterator[Variant]:
    """BBQ's draws with a seeded generator: up to 5 vocabulary words or 6 first names per row, then each
    name pair with one word per WORD slot."""
    rng = item_rng(seed, "bbq", template.category, template.q_id, template.version)
    for pair in _pairs(template, vocabulary, _names(template, vocabulary, rng)):
        word1, word2 = (rng.choice(words) for words in _word_lists(template))
        yield Variant(template, *pair, word1=word1, word2=word2)


Pair = tuple[str, str, str, str]  # name1, name2, info1, info2


def _names(template: Template, vocabulary: Vocabulary, rng: Random | None) -> list[tuple[str, str]]:
    """The words NAME1 is drawn from, with their Info (all of them when `rng` is None)."""
    if template.names is not None:
        return [(name, template.info[0]) for name in template.names[0]]
    if template.proper_names:
        words, size = [(name, "") for name in vocabulary.first_names], NAME_SAMPLE
    elif (template.category, template.subcategory) in vocabulary.words:
        words, size = vocabulary.words[(template.category, template.subcategory)], OCCUPATION_SAMPLE
    else:
        raise TemplateError(f"{template.where}: no Names, no Proper_nouns_only and no vocabulary for "
                            f"{template.category} '{template.subcategory}'; give the row a Names list")
    return words if rng is None or len(words) <= size else rng.sample(words, size)


def _pairs(template: Template, vocabulary: Vocabulary, first: list[tuple[str, str]]) -> list[Pair]:
    """The (NAME1, NAME2) pairs with their tags, each ordered pair once."""
    if template.names is not None:
        return [(one, two, *template.info) for (one, _), two in itertools.product(first, template.names[1])]
    if template.proper_names:  # each other drawn name; tags follow the slot
        pairs = [(one, two, *template.info) for (one, _), (two, _) in itertools.permutations(first, 2)]
    else:  # each word of the other Info level, then swapped
        others = vocabulary.words[(template.category, template.subcategory)]
        pairs = [p for (one, a), (two, b) in itertools.product(first, others) if a != b
                 for p in ((one, two, a, b), (two, one, b, a))]
    return list(dict.fromkeys(pairs))


def _word_lists(template: Template) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The words each WORD slot takes in the ambiguous texts ("" where the slot is unused there)."""
    if template.words is None:
        return ("",), ("",)
    used = " ".join(template.texts.values())
    first, second = (words if words and "{{WORD" + slot + "}}" in used else ("",)
                     for slot, words in zip("12", template.words, strict=True))
    return first, second


# The data file of specs/bbq.spec: `python -m spec_audits.families.influence.bbq_templates` rewrites it.
ROOT = Path(__file__).resolve().parents[2]
SOURCE = ROOT / "specs" / "data" / "bbq" / "release"  # BBQ's files as released, CC-BY-4.0 (../LICENSE)
TARGET = ROOT / "specs" / "data" / "bbq" / "bbq.csv"
RELEASE_ITEMS = ROOT / "specs" / "data" / "bbq" / "release-items.csv"  # the questions seed 000's release asked
COLUMNS = ("id", "experiment", "template", "context", "question", "answer_A", "answer_B", "tag_A", "tag_B",
           *RELEASE_COLUMNS)
SEED = 20260228
"""The draws of SES variants and of their answer order (BBQ's generator is unseeded)."""


def age_rows(items: list[ReleasedItem], prefix: str = "age") -> Iterator[tuple[str, ...]]:
    """BBQ's released items as they are, their two group answers in the release's order."""
    for item in items:
        experiment = f"{item.category.lower()}_{item.polarity}"
        (a, b) = item.answers
        yield (f"{prefix}-{item.example_id}", experiment, f"{experiment}-{item.q_id}", item.context, item.question,
               a.text, b.text, a.tag, b.tag)


def compiled_rows(templates: list[Template], vocabulary: Vocabulary, seed: int) -> Iterator[tuple[str, ...]]:
    """Each drawn variant as two rows (negative, non-negative question), the answers in a seeded order."""
    for t in templates:
        for number, variant in enumerate(drawn_variants(t, vocabulary, seed)):
            item = fill(variant)
            key = f"{t.category.lower()}-{t.q_id}{t.version}-{number}"
            (a, b) = item.answers if item_rng(seed, "bbq answers", key).random() < 0.5 else item.answers[::-1]
            for polarity, question in item.questions.items():
                experiment = f"{t.category.lower()}_{polarity}"
                yield (f"{key}-{polarity}", experiment, f"{experiment}-{t.q_id}", item.context, question,
                       a[0], b[0], a[1], b[1])


def write_csv(source: Path, target: Path, seed: int = SEED, release_items: Path = RELEASE_ITEMS) -> Counter[str]:
    """Age from the release, SES compiled from the templates, the BIG-bench lite SES rows the seed-000 release
    asked, each row marked with its place in that release's draw; the rows written per experiment."""
    ses = read_templates(source / "templates" / "new_templates - SES.csv")
    age = read_jsonl(source / "data" / "Age.jsonl")
    released = read_release_items(release_items)
    lite = {item.example_id: item for item in read_bigbench(source / "bigbench_bbq_lite" / "resources" / "SES.json")}
    extra = [lite[int(r.copy_id)] for r in released if r.source == "bigbench_lite"]
    compiled = list(compiled_rows(ses, read_vocabulary(source / "templates"), seed))
    rows = [*age_rows(age), *compiled, *age_rows(extra, "ses-bb")]
    marks = _release_marks(age, released, compiled)
    rows = [(*row, *release_columns(row[0], marks)) for row in rows]
    partial = target.with_name(target.name + ".partial")  # renamed into place: never a half-written CSV
    with partial.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle, lineterminator="\n")
        writer.writerow(COLUMNS)
        writer.writerows(rows)
    partial.replace(target)
    return Counter(row[1] for row in rows)


def _release_marks(age: list[ReleasedItem], released: list[Released],
                   compiled: list[tuple[str, ...]]) -> dict[str, tuple[str, str]]:
    """bbq.csv row id -> (draw position, BBQ id stood in for): Age by the release's rule, SES by its ids."""
    marks: dict[str, tuple[str, str]] = {}
    counts: Counter[str] = Counter()
    for item in release_draw(age):
        counts[item.polarity] += 1
        marks[f"age-{item.example_id}"] = (str(counts[item.polarity]), "")
    replacing = stand_ins(released, compiled, COLUMNS.index("template"))
    for question in (r for r in released if not r.experiment.startswith("age")):
        row_id = {"ses_templates": question.copy_id, "bigbench_lite": f"ses-bb-{question.copy_id}"}.get(
            question.source) or replacing[question.bbq_id]
        marks[row_id] = (str(question.position), str(question.bbq_id) if question.source == "ses_jsonl" else "")
    return marks


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m spec_audits.families.influence.bbq_templates",
        description=__doc__.split("\n")[0]
        + " Rewrites specs/data/bbq/bbq.csv: Age from BBQ's Age.jsonl, SES from its templates.")
    parser.add_argument("--source", type=Path, default=SOURCE, help="BBQ's folder: data/, templates/ (%(default)s)")
    parser.add_argument("--out", type=Path, default=TARGET, help="the CSV to write (%(default)s)")
    args = parser.parse_args(argv)
    try:
        counts = write_csv(args.source, args.out)
    except (OSError, TemplateError, ReleaseError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(f"wrote {args.out}: {', '.join(f'{name} {count}' for name, count in sorted(counts.items()))}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
