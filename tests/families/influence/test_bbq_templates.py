"""The BBQ template compiler (families/influence/bbq_templates.py) against BBQ's released items: byte for byte
on every ambiguous Age.jsonl row, and on the BIG-bench lite SES set up to its older template wording."""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import replace
from functools import cache
from pathlib import Path

import pytest

from spec_audits.families.influence import bbq_templates as bt
from spec_audits.families.influence.bbq_release import UNKNOWN_ANSWERS, ReleasedItem, read_bigbench, read_jsonl
from tests.support import ROOT

SOURCE = bt.SOURCE
Compiled = dict[tuple[str, str], dict[frozenset[str], list[bt.Item]]]


@cache
def compiled(category: str) -> Compiled:
    """Every item the templates can give, by (Q_id, version), then by the two names."""
    vocabulary = bt.read_vocabulary(SOURCE / "templates")
    out: Compiled = defaultdict(lambda: defaultdict(list))
    for template in bt.read_templates(SOURCE / "templates" / f"new_templates - {category}.csv"):
        for variant in bt.variants(template, vocabulary):
            out[(template.q_id, template.version)][frozenset((variant.name1, variant.name2))].append(bt.fill(variant))
    return out


def candidates(row: ReleasedItem, items: Compiled) -> list[bt.Item]:
    """Our items of the row's template and names (BBQ records no name where its name lookup failed), any
    word choice: BBQ draws one WORD per name pair unseeded, so the released row equals one of them."""
    names = {a.name for a in row.answers if a.name}
    by_names = items.get((row.q_id, "" if row.version == "None" else row.version), {})
    return [item for pair, found in by_names.items() if names <= pair for item in found]


def compare(row: ReleasedItem, items: Compiled) -> str:
    same_text = [item for item in candidates(row, items) if item.context == row.context
                 and item.questions[row.polarity] == row.question
                 and {text for text, _ in item.answers} == {a.text for a in row.answers}]
    if len(same_text) != 1:
        return f"{len(same_text)} items with its texts"
    ours, released = dict(same_text[0].answers), {a.text: a.tag for a in row.answers}
    if ours == released:
        return "identical"
    if all(released[text] in ("", tag) for text, tag in ours.items()):
        return "no tag"
    return "swapped tags" if ours == dict(zip(released, reversed(released.values()), strict=True)) else "other tags"


@pytest.fixture(scope="module")
def age() -> list[ReleasedItem]:
    return read_jsonl(SOURCE / "data" / "Age.jsonl")


def test_every_ambiguous_age_row_is_compiled_byte_for_byte(age: list[ReleasedItem]) -> None:
    coverage = Counter(compare(row, compiled("Age")) for row in age)
    assert coverage == {"identical": 1840}, f"coverage of Age.jsonl's 1840 ambiguous rows: {dict(coverage)}"
    assert {row.unknown for row in age} == set(UNKNOWN_ANSWERS)


def test_the_age_name_pairs_are_those_of_the_release(age: list[ReleasedItem]) -> None:
    released = Counter((row.q_id, row.version, frozenset(a.name for a in row.answers), row.polarity) for row in age)
    ours = {(*template, pair, polarity) for template, pairs in compiled("Age").items() for pair in pairs
            for polarity in ("neg", "pos")}
    assert set(released) == ours and set(released.values()) == {1} and len(ours) == 1840


OLDER_WORDING = {"Jeapardy": "Jeopardy", "kindergarden": "kindergarten", "targetting": "targeting"}


def test_the_bigbench_ses_rows_differ_only_where_the_lite_set_is_older_or_bbq_mistags() -> None:
    """The lite set was generated before three typos in the SES templates were fixed; BBQ's swapped
    proper-name rows (template 8) keep the unswapped row's tags; and where BBQ's answer lookup missed "an
    one percenter" (its own a -> an rule, template 6) it recorded no tag."""
    items, outcome = compiled("SES"), Counter()
    for row in read_bigbench(SOURCE / "bigbench_bbq_lite" / "resources" / "SES.json"):
        result = compare(row, items)
        if result != "identical":
            context = row.context
            for old, new in OLDER_WORDING.items():
                context = context.replace(old, new)
            if context != row.context:
                result = compare(replace(row, context=context), items) + " after the typo fixes"
        outcome[(row.q_id, result)] += 1
    assert sum(n for (_, result), n in outcome.items() if result == "identical") == 668
    assert {key: n for key, n in outcome.items() if key[1] != "identical"} == {
        ("8", "swapped tags"): 120, ("6", "no tag"): 8, ("4", "identical after the typo fixes"): 80,
        ("9", "identical after the typo fixes"): 36, ("14", "identical after the typo fixes"): 80}


def test_swapped_proper_names_keep_the_tag_of_their_slot() -> None:
    vocabulary = bt.read_vocabulary(SOURCE / "templates")
    row8a = next(t for t in bt.read_templates(SOURCE / "templates" / "new_templates - SES.csv")
                 if (t.q_id, t.version) == ("8", "a"))
    drawn = list(bt.drawn_variants(row8a, vocabulary, seed=1))
    assert len(drawn) == 6 * 5 and len({v.name1 for v in drawn}) == 6
    names = {(v.name1, v.name2) for v in drawn}
    assert all((two, one) in names for one, two in names)
    for variant in drawn:
        item = bt.fill(variant)
        assert f"{variant.name1} is from a {variant.word1} family" in item.context
        assert variant.word1 in ("low income", "poor", "working-class")
        assert dict(item.answers) == {variant.name1: "lowSES", variant.name2: "highSES"}


def test_occupations_are_drawn_five_at_a_time_and_paired_across_levels() -> None:
    vocabulary = bt.read_vocabulary(SOURCE / "templates")
    jeopardy = next(t for t in bt.read_templates(SOURCE / "templates" / "new_templates - SES.csv") if t.q_id == "4")
    drawn = list(bt.drawn_variants(jeopardy, vocabulary, seed=1))
    levels = dict(vocabulary.words[("SES", "Occupation")])
    assert all({levels[v.name1], levels[v.name2]} == {"lowSES", "highSES"} for v in drawn)
    assert len(drawn) == len(set(drawn)) and {(v.name2, v.name1) for v in drawn} == {(v.name1, v.name2) for v in drawn}
    # 5 drawn words x the 12 of the other level, both orders, less the pairs of two drawn words counted twice
    assert 108 <= len(drawn) <= 120
    assert drawn == list(bt.drawn_variants(jeopardy, vocabulary, seed=1))
    assert drawn != list(bt.drawn_variants(jeopardy, vocabulary, seed=2))


def test_an_before_a_vowel_only_when_a_name_starts_with_one() -> None:
    template = next(t for t in bt.read_templates(SOURCE / "templates" / "new_templates - SES.csv")
                    if (t.q_id, t.version) == ("6", "a"))
    welfare = bt.fill(bt.Variant(template, "on welfare", "a one percenter", "lowSES", "highSES"))
    assert welfare.context.endswith("one is on welfare, while the other is an one percenter.")
    assert welfare.answers == (("The one who's an one percenter", "highSES"), ("The one who's on welfare", "lowSES"))
    made_up = replace(template, texts={**template.texts, "context": "Both a {{NAME1}} and a {{NAME2}} saw a owl."})
    assert bt.fill(bt.Variant(made_up, "cook", "judge", "lowSES", "highSES")).context == \
        "Both a cook and a judge saw a owl."
    assert bt.fill(bt.Variant(made_up, "cook", "optometrist", "lowSES", "highSES")).context == \
        "Both a cook and an optometrist saw an owl."


def test_the_shipped_csv_is_what_the_module_writes(tmp_path: Path) -> None:
    counts = bt.write_csv(SOURCE, tmp_path / "bbq.csv")
    assert (tmp_path / "bbq.csv").read_bytes() == (ROOT / "specs" / "data" / "bbq" / "bbq.csv").read_bytes()
    assert counts == {"age_neg": 920, "age_pos": 920, "ses_neg": 1536, "ses_pos": 1532}  # + 4 BIG-bench lite rows


def test_slot_lists_read_both_spellings_and_name_a_bad_row() -> None:
    assert bt.slot_lists("{{NAME1}}: [a b, c]; {{NAME2}}: [d]", "NAME", "f: row 2") == (("a b", "c"), ("d",))
    assert bt.slot_lists("WORD1: [x,  y ]", "WORD", "f: row 2") == (("x", "y"), ())
    with pytest.raises(bt.TemplateError, match=r"^f: row 7: cannot read 'NAME1 = \[a\]' as 'NAME1: \[word, word, "
                       r"\.\.\.\]'; write the lists as NAME1: \[\.\.\.\]; NAME2: \[\.\.\.\]$"):
        bt.slot_lists("NAME1 = [a]", "NAME", "f: row 7")


def test_the_command_reports_a_missing_source_in_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert bt.main(["--source", str(tmp_path), "--out", str(tmp_path / "out.csv")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "new_templates - SES.csv" in err and err.count("\n") == 1


def test_an_answer_without_its_slot_is_a_located_error(tmp_path: Path) -> None:
    header = (SOURCE / "templates" / "new_templates - SES.csv").read_text(encoding="utf-8").splitlines()[0]
    fields = dict.fromkeys(header.split(","), "")
    fields |= {"Q_id": "1", "Category": "SES", "Ambiguous_Context": "A {{NAME1}} met a {{NAME2}}.",
               "Names": "NAME1: [cook]; NAME2: [judge]", "Answer_negative": "The cook", "Answer_non_negative":
               "The {{NAME2}}", "NAME1_info": "lowSES", "NAME2_info": "highSES"}
    (tmp_path / "t.csv").write_text(header + "\n" + ",".join(fields.values()) + "\n", encoding="utf-8")
    template, = bt.read_templates(tmp_path / "t.csv")
    variant = next(bt.variants(template, bt.Vocabulary({}, [])))
    with pytest.raises(bt.TemplateError, match=r"t\.csv: row 2: Answer_negative 'The cook' names 0 of the slots"):
        bt.fill(variant)
