"""`spec view`: transcripts rebuilt as the runner played them, the data embedded so that no text is markup,
where the page goes, and the errors a user meets. The page in a real browser: test_view_browser.py."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from spec_audits.cli import main
from spec_audits.contract.results_model import ResultRow
from spec_audits.contract.writer import suite_row
from spec_audits.runner.report.document import Table
from spec_audits.runner.result_checks import read_checked_run
from spec_audits.runner.score_input import ScoreInputError
from spec_audits.runner.view_data import transcript, view_data
from spec_audits.runner.view_page import embedded_json, render_page
from tests.runner.view_fixtures import HOSTILE, study
from tests.support import repeat_message


def _conversation_row() -> tuple[object, ResultRow]:
    row = suite_row({
        "messages": [{"role": "system", "content": "Be brief."},
                     {"role": "user", "content": "Tea or coffee? A: tea B: coffee"},
                     {"role": "assistant", "generate": True,
                      "answer": {"name": "first", "answers": {"A": "a", "B": "b"},
                                 "options": {"A": "tea", "B": "coffee"}}},
                     {"role": "user", "content": "You chose {{ first.option }}, not {{ first.other }}. Sure?",
                      "fill": True}],
        "samples": 1, "cell": {"arm": "x"}, "answers": {"A": "a", "B": "b"}, "decode": {"max_tokens": 2},
        "followups": [{"name": "why", "content": "Why {{ answer }}?",
                       "judge": {"labels": ["yes", "no"], "prompt": "Judge: {{ reply }}"}}]})
    result = ResultRow(item_id=row.id, sample=0, model="openai/stub", params={}, response="B", answer="B", outcome="b",
                       turns=[{"turn": 2, "content": "A"}],
                       turn_answers={"first": {"turn": 2, "response": "A", "answer": "A", "outcome": "a"}},
                       followups={"why": {"response": "Because.", "label": "no", "judge_response": "no"}}, cached=True)
    return row, result


def test_a_transcript_holds_every_turn_as_sent_and_received() -> None:
    row, result = _conversation_row()
    assert transcript(row, result) == [  # type: ignore[arg-type]
        {"role": "system", "text": "Be brief."},
        {"role": "user", "text": "Tea or coffee? A: tea B: coffee"},
        {"role": "assistant", "text": "A", "note": "answered turn 'first': parsed 'A' = a"},
        {"role": "user", "text": "You chose tea, not coffee. Sure?"},
        {"role": "assistant", "text": "B", "note": "the answer"},
        {"role": "user", "text": "Why B?", "note": "follow-up why"},
        {"role": "assistant", "text": "Because."},
        {"role": "judge", "text": "no", "note": "judge label: no"},
    ]


def test_an_extraction_call_is_shown_with_its_prompt_and_reply() -> None:
    row = suite_row({"messages": [{"role": "user", "content": "Decide."}], "samples": 1, "cell": {},
                     "answers": {"1": "x", "2": "y"}, "decode": {},
                     "extract": {"prompt": "Which option does this pick? {{ answer }}", "parse": "option_number"}})
    result = ResultRow(item_id=row.id, sample=0, model="m", params={}, response="I pick the first.", answer="1",
                       outcome="x", extraction="Option 1")
    assert transcript(row, result)[1:] == [
        {"role": "assistant", "text": "I pick the first.", "note": "the answer"},
        {"role": "extraction", "text": "Which option does this pick? I pick the first.", "note": "extraction prompt"},
        {"role": "extraction", "text": "Option 1", "note": "extraction reply"}]


def test_no_text_can_end_the_data_element_or_open_markup() -> None:
    text = embedded_json({"t": HOSTILE + "</script><!--\u2028\u202e"})
    assert not re.search(r"[<>&]", text) and "\u2028" not in text
    assert json.loads(text) == {"t": HOSTILE + "</script><!--\\u2028\\u202e"}  # shown as escapes, not obeyed
    page = render_page({"title": HOSTILE, "runs": [], "factors": {}, "headline": None, "rows": []})
    assert HOSTILE not in page and page.count("<script") == 2


def test_view_writes_beside_the_report_and_reads_every_model(tmp_path: Path) -> None:
    folder = study(tmp_path)
    result = CliRunner().invoke(main, ["view", str(folder)])
    assert result.exception is None and result.exit_code == 0, result.output
    assert result.output.splitlines()[0] == str(folder / "view.html")
    data, out = view_data(folder)
    assert out == folder and {r["model"] for r in data["rows"]} == {"openai/stub-a", "openai/stub-b"}
    assert len(data["rows"]) == 18 and data["factors"]["influence"] == sorted(["none", "survey", HOSTILE])
    assert {r["parsed"] for r in data["rows"]} == {True, False}  # the stub leaves some unparsed
    assert data["headline"] is None
    (folder / "score").mkdir()
    (folder / "score" / "summary.json").write_text('{"family": "influence"}', encoding="utf-8")
    data, out = view_data(folder / "score", (Table(["a", "q (BH)"], [["1", "0.5"]]), "How to read this: q"))
    assert out == folder / "score"
    assert data["headline"] == {"header": ["a", "q (BH)"], "rows": [["1", "0.5"]], "note": "How to read this: q"}


def test_a_folder_that_is_no_run_is_a_located_error(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["view", str(tmp_path)])
    assert result.exit_code == 1 and isinstance(result.exception, SystemExit)
    assert result.output == (f"Error: {tmp_path}: is neither a run folder (run.json), a study (study.json) nor the "
                             "score/ folder inside one; give the folder `spec run` wrote, e.g. runs/NAME\n")


def test_the_report_links_the_page_it_writes_beside_itself(tmp_path: Path) -> None:
    from spec_audits.runner.report.document import Document
    from spec_audits.runner.report.html import render_html
    from spec_audits.runner.view_data import view_for_report

    folder = study(tmp_path)
    assert view_for_report(folder / "score", folder / "score") == folder / "score" / "view.html"
    assert (folder / "score" / "view.html").read_text(encoding="utf-8").count('"model": "openai/stub-b"') == 10
    assert view_for_report(tmp_path / "elsewhere" / "score", tmp_path) is None  # a published table's score
    assert '<a href="view.html">view.html</a>' in render_html(Document("t"), "view.html")
    assert "<a href" not in render_html(Document("t"))


def test_view_and_the_checked_reader_refuse_a_repeated_item_and_sample(tmp_path: Path) -> None:
    """`spec view` shows one record per (item, sample): a results file repeating one is refused at its second row,
    naming the first, as `spec score` refuses it, and so does the SDK's checked reader (read_checked_run)."""
    folder = study(tmp_path)
    path = folder / "stub-b" / "results.jsonl"
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    path.write_text("".join([*lines[:3], lines[1], *lines[3:]]), encoding="utf-8")
    first = json.loads(lines[1])
    kinds = "failed then failed" if first["error"] else "answered then answered"
    expected = repeat_message(path, 4, first["item_id"], first["sample"], 2, kinds)
    result = CliRunner().invoke(main, ["view", str(folder)])
    assert result.exit_code == 1 and isinstance(result.exception, SystemExit), result.output
    assert result.output == expected
    with pytest.raises(ScoreInputError) as caught:
        read_checked_run(folder / "stub-b")
    assert f"Error: {caught.value.message}\n" == expected
