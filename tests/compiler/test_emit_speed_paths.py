"""The compile's fast paths give what the plain ones gave: the memoised render (with the steps it took),
a template parsed and compiled once for all its checks, the C JSON encoder built once, the bucketed sort by
id; and a row over the render step limit."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from spec_audits.compiler import nodes as n
from spec_audits.compiler.emit import DuplicateRowError, Tally, write_rows
from spec_audits.compiler.errors import ErrorCollector, Span, SpecError
from spec_audits.compiler.sandbox import environment, tally_steps
from spec_audits.compiler.templates import (
    CompiledText,
    RenderMemo,
    check_attributes,
    check_slots,
    compile_text,
    parsed,
)
from spec_audits.contract.seeding import canonical_json

LOOPS = "{% for a in s %}{% for b in s %}{% endfor %}{% endfor %}"
SLOW_ROW = f'''suite slow "Slow"
seed 1
factor f:
  A a "a people" / "a person"
  B b "b people" / "b person"
# only the last comparison's question is stuck: the checks render the first
template question """
A: {{{{ first.n }}}} B: {{{{ second.n }}}}
{{% set s = 'x' * 90000 %}}{{% if first.n == 3 and second.n == 3 %}}{LOOPS}{{% endif %}}
"""
influence nudge append "Choose {{{{ target.plural }}}}."
design main:
  factors *
  influences *
  conditions baseline, toward A, toward B
  sizes n_A in 1..3, n_B in 1..3
  order both
  answer choice "A" | "B"
  decode temperature 1.0
'''


def text(value: str) -> CompiledText:
    return CompiledText(n.Text(span=Span("t.spec", 3, 10), value=value, body_line=3), "template 'q'")


# ---- one parse and one compile per template ------------------------------------------------

WALKED = ("{% set people = target.plurall %}{% for x in items | sort %}{{ loop.index }} {{ x.n }}{% endfor %}"
          "{% with y = first %}{{ y.n ~ answer }}{% endwith %}{% if second.n > 2 %}{{ people | upper }}{% endif %}")


def test_a_template_is_compiled_once_and_its_checks_leave_its_tree_as_parsed() -> None:
    errors = ErrorCollector()
    first = compile_text(text(WALKED).text, "template 'q'", {"target", "items", "first", "second"}, errors)
    again = text(WALKED)
    check_slots(again.text, "template 'q'", ["answer"], errors)
    check_attributes(again.text, "template 'q'", {"target": ["plural", "singular"]}, errors)
    assert first is not None and again.template is first.template  # the second compile was the first's
    assert parsed(WALKED) == environment().parse(WALKED)  # the shared tree was read, never rewritten
    assert [d.message for d in errors.diagnostics] == [
        "undefined template variable 'answer' in template 'q'",
        "'answer' in template 'q' is filled in when the text is sent, so it can only be shown as it is",
        "undefined template variable 'target.plurall' in template 'q'",
    ]


# ---- memoised renders ---------------------------------------------------------------------
def test_a_missing_attribute_renders_its_default_for_each_dict() -> None:
    cue = text("{{ t.shot | default(t.plural) }}")
    assert [cue.render({"t": t}) for t in ({"plural": "cats"}, {"plural": "dogs"}, {"shot": "a dog", "plural": "x"},
                                            {"plural": "cats"})] == ["cats", "dogs", "a dog", "cats"]


def test_a_dict_method_is_never_memoised_on_the_item_of_that_name() -> None:
    listing = text("{{ t.values() | join(',') }}")
    assert listing.render({"t": {"a": "1", "values": "v"}}) == "1,v"
    assert listing.render({"t": {"a": "2", "values": "v"}}) == "2,v"


def test_two_templates_with_the_same_reads_keep_their_own_renders() -> None:
    first, second = text("A {{ t.n }}"), text("B {{ t.n }}")
    assert (first.render({"t": {"n": 1}}), second.render({"t": {"n": 1}})) == ("A 1", "B 1")


def test_the_memo_drops_the_least_recently_used_within_its_bounds() -> None:
    memo = RenderMemo(entries=3, chars=10)
    for steps, key in enumerate("abc"):
        memo.put((key,), key * 2, steps)
    assert memo.get(("a",)) == ("aa", 0)  # now the most recent
    memo.put(("d",), "dd", 3)  # a fourth entry: b, the least recently used, goes
    assert [memo.get((k,)) for k in "bcad"] == [None, ("cc", 2), ("aa", 0), ("dd", 3)]
    memo.put(("e",), "e" * 6, 4)  # 12 characters: c goes, then 10 remain
    assert [memo.get((k,)) for k in "cade"] == [None, ("aa", 0), ("dd", 3), ("eeeeee", 4)]


def test_a_memoised_render_counts_the_steps_it_took() -> None:
    cue = text("{{ t.plural | upper }}")
    counts = []
    for _ in range(2):  # the first renders, the second is the memo's
        with tally_steps() as tally:
            assert cue.render({"t": {"plural": "cats"}}) == "CATS"
        counts.append(tally.steps)
    assert counts[0] == counts[1] > 0


# ---- canonical JSON -------------------------------------------------------------------------
@pytest.mark.parametrize("value", [
    {"b": [1, 2.5, -0.0, 1e300, None, True, False], "a": {"z": "é\u2028\n\"\\", "y": 10**30}},
    ["\x00\x1f", "😀", {"3": 1, "10": 2}, [], {}],
    {"messages": [{"role": "user", "content": "Option A:\n4 people"}], "samples": 4, "cell": {"n_A": 4}},
])
def test_canonical_json_is_json_dumps_with_its_options(value: object) -> None:
    assert canonical_json(value) == json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


# ---- the bucketed sort ------------------------------------------------------------------------
def test_rows_come_out_sorted_by_id_with_the_file_hash(tmp_path: Path) -> None:
    rows = [{"cell": {"k": i}, "samples": 1, "messages": []} for i in range(500)]
    digest = write_rows(rows, tmp_path, Tally(), ("k",))
    data = (tmp_path / "suite.jsonl").read_bytes()
    ids = [json.loads(line)["id"] for line in data.splitlines()]
    expected = sorted(hashlib.sha256(canonical_json(r).encode()).hexdigest()[:16] for r in rows)
    assert ids == expected and digest == hashlib.sha256(data).hexdigest()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["suite.jsonl"]


def test_a_repeated_row_is_named_by_its_id(tmp_path: Path) -> None:
    row = {"cell": {"k": 1}, "samples": 1, "messages": []}
    with pytest.raises(DuplicateRowError, match=hashlib.sha256(canonical_json(row).encode()).hexdigest()[:16]):
        write_rows([row, {"cell": {"k": 2}, "samples": 1, "messages": []}, row], tmp_path, Tally(), ("k",))


# ---- the step limit ---------------------------------------------------------------------------
def test_a_row_over_the_step_limit_stops_the_compile_at_its_template(tmp_path: Path) -> None:
    from spec_audits.compiler.dispatch.build import compile_file

    spec = tmp_path / "slow.spec"
    spec.write_text(SLOW_ROW, encoding="utf-8")
    with pytest.raises(SpecError) as caught:
        compile_file(spec, tmp_path / "out")
    assert [(d.span.line, d.message) for d in caught.value.diagnostics] == [
        (7, "template 'question' is refused: the template takes more than 1,000,000 steps to render (loop "
            "turns, lookups, calls and the characters they handle)")]
    assert not (tmp_path / "out").exists()
