"""Reports readable cold (runner/report/cold.py): the suite's name in the title, the embedded-model caveat
whenever it answered, a "how to read this" line under each table, and `spec score` printing its headline
table and the commands to run next."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from spec_audits.cli import main
from spec_audits.runner.report.cold import EMBEDDED_CAVEAT, headline, how_to_read, readable
from spec_audits.runner.report.document import Document, Heading, Paragraph, Table
from tests.runner.publish.project import make_project
from tests.runner.publish.test_peer_roundtrip import ByPrompt, _native
from tests.runner.view_fixtures import study

EFFECTS = Table(["term", "level", "reference", "n", "mean", "shift", "interval", "q (BH)", "logit shift"],
                [["age", "25", "60", "40", "0.5", "0.1", "[0, 0.2]", "0.04 *", "0.4"]])


def test_each_known_column_is_explained_once_in_the_order_shown() -> None:
    note = how_to_read(EFFECTS)
    assert note is not None and note.text.startswith("How to read this: n counts the answers behind the row")
    terms = ("n counts", "shift is", "interval is", "q is", "logit shift is")
    assert [note.text.index(term) for term in terms] == sorted(note.text.index(term) for term in terms)
    assert how_to_read(Table(["p (order effect)", "p"], [])) == Paragraph(
        "How to read this: p is the chance of a difference at least this large if the condition changed nothing.")
    assert how_to_read(Table(["model", "condition"], [])) is None


def test_a_report_of_runs_is_titled_by_its_suite_and_warns_when_the_embedded_model_answered(tmp_path: Path) -> None:
    folder = study(tmp_path)
    doc = Document("Effects", [Heading("Model x"), EFFECTS])
    plain = readable(doc, folder / "score")
    assert plain.title == "suite: Effects" and plain.blocks[:2] == doc.blocks
    assert readable(Document("Audit of suite"), folder / "score").title == "Audit of suite"  # names it already
    assert isinstance(plain.blocks[2], Paragraph) and plain.blocks[2].text.startswith("How to read this:")
    info = json.loads((folder / "stub-b" / "run.json").read_text())
    (folder / "stub-b" / "run.json").write_text(json.dumps({**info, "model": "local/gemma-3-270m"}))
    assert readable(doc, folder / "score").blocks[0] == Paragraph(EMBEDDED_CAVEAT)
    assert readable(doc, tmp_path / "elsewhere" / "score") == Document("Effects", [*doc.blocks, plain.blocks[2]])


def test_the_headline_is_the_first_table_aligned_and_cut() -> None:
    table = Table(["a", "long header"], [[str(i), "x"] for i in range(10)])
    lines = headline(Document("t", [Paragraph("p"), table]), rows=2)
    assert lines == ["a  long header", "0  x", "1  x", "... and 8 more rows in the report"]
    assert headline(Document("t", [Paragraph("no table")])) == []


def test_spec_score_prints_its_headline_and_what_comes_next(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    server = ByPrompt()
    api_base = server.start()
    try:
        run = _native(make_project(tmp_path), api_base)
    finally:
        server.stop()
    result = CliRunner().invoke(main, ["score", str(run)])
    assert result.exception is None and result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[3].split() == ["Benchmark", "Mean", "|shift|", "without", "few-shot", "one-sentence", "cues", "Sig.",
                                "asym", "among", "neutral", "after", "BH", "Backfire", "among", "sig."]
    assert lines[4].startswith("golden_oneorder  ") and lines[5] == ""
    assert lines[-2:] == ["next: spec report native/score     (report.html and report.md, with plots)",
                          "      spec view native     (every answer's transcript)"]
    viewed = CliRunner().invoke(main, ["view", "native"])  # the page opens on the same headline table
    assert viewed.exception is None and viewed.output.splitlines()[0] == "native/score/view.html"
    page = Path("native/score/view.html").read_text(encoding="utf-8")
    data = json.loads(page.split('<script type="application/json" id="data">')[1].split("</script>")[0])
    assert data["headline"]["header"][:2] == ["Benchmark", "Mean |shift|"]
    assert data["headline"]["rows"][0][0] == "golden_oneorder" and data["headline"]["note"].startswith("How to")
