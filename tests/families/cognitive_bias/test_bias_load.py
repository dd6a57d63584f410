"""The conditional-bias loader reads the suite and results.jsonl as columns (issue 34): a row that repeats an
earlier row's (item, sample) is refused at its row, naming both (as every family refuses it), and `spec merge`, which
the message names, keeps one row of each; a result row of an item the suite lacks is refused at its row."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from spec_audits.cli import main
from spec_audits.compiler.dispatch.build import compile_file
from tests.support import ROOT, repeat_message, suite_rows

TABLES = ("rows.csv", "effects.csv", "abstention.csv", "positions.csv", "cells_content.csv", "causal.csv",
          "summary.json", "psm.json", "diagonal.json")


@pytest.fixture(scope="module")
def suite(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[dict[str, Any]]]:
    folder = tmp_path_factory.mktemp("suite") / "suite"
    compile_file(ROOT / "specs" / "cognitive_bias.spec", folder)
    return folder, suite_rows(folder)


def _token(row: dict[str, Any], salt: str = "") -> str | None:
    """A deterministic spread of displayed options, with abstentions."""
    digest = hashlib.sha256((salt + row["id"]).encode()).digest()
    return None if digest[0] < 8 else sorted(row["answers"])[digest[1] % len(row["answers"])]


def _line(row: dict[str, Any], token: str | None, error: str | None = None) -> dict[str, Any]:
    return {"item_id": row["id"], "sample": 0, "model": "m", "params": {}, "response": token, "answer": token,
            "outcome": row["answers"].get(token) if token else None, "error": error}


def _score(run: Path, suite: Path, lines: list[dict[str, Any]]) -> Any:
    run.mkdir()
    (run / "results.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    digest = hashlib.sha256((suite / "manifest.json").read_bytes()).hexdigest()
    (run / "run.json").write_text(json.dumps({
        "suite_dir": str(suite), "suite_manifest_sha256": digest, "model": "m", "mode": "sample", "settings": {},
        "started": "2026-01-01T00:00:00+00:00", "planned": len(lines), "done": len(lines), "failed": 0}),
        encoding="utf-8")
    return CliRunner().invoke(main, ["score", str(run)])


def test_a_repeated_item_and_sample_is_refused_and_merge_keeps_one_row_of_each(
        suite: tuple[Path, list[dict[str, Any]]], tmp_path: Path) -> None:
    """A failure then its answer, or two answers, is refused at the second row; `spec merge RUN --out NEW` (the fix
    the message names) keeps the answer, and its score is the very score of the run that answered each once."""
    folder, rows = suite
    once = [_line(row, _token(row)) for row in rows]
    retried: list[dict[str, Any]] = []
    for index, row in enumerate(rows):
        if index % 3 == 0:  # a failure, then the answer
            retried.append(_line(row, None, error="timeout"))
        if index % 3 == 1:  # an earlier answer, then another
            retried.append(_line(row, _token(row, "earlier")))
        retried.append(_line(row, _token(row)))
        if index % 5 == 0:  # a later failure
            retried.append(_line(row, None, error="timeout"))
    result = _score(tmp_path / "retried", folder, retried)
    assert result.exit_code == 1 and isinstance(result.exception, SystemExit), result.output
    assert result.output == repeat_message(tmp_path / "retried" / "results.jsonl", 2, rows[0]["id"], 0, 1,
                                           "failed then answered")
    two = _score(tmp_path / "two", folder, [once[0], once[1], _line(rows[1], _token(rows[1], "earlier"))])
    assert two.output == repeat_message(tmp_path / "two" / "results.jsonl", 3, rows[1]["id"], 0, 2,
                                        "answered then answered")
    merged = CliRunner().invoke(main, ["merge", str(tmp_path / "retried"), "--out", str(tmp_path / "merged")])
    assert merged.exit_code == 0 and merged.exception is None, merged.output
    for run, lines in (("once", once), ("merged", None)):
        result = _score(tmp_path / run, folder, lines) if lines else CliRunner().invoke(main, ["score", str(
            tmp_path / run)])
        assert result.exit_code == 0 and result.exception is None, result.output
    for name in TABLES:
        assert (tmp_path / "once" / "score" / name).read_bytes() == (tmp_path / "merged" / "score" / name).read_bytes()
    summary = json.loads((tmp_path / "once" / "score" / "summary.json").read_text(encoding="utf-8"))
    assert summary["bank_rows"] == 53 and summary["failed"] == 0


def test_an_item_that_only_failed_counts_as_failed_and_abstains(suite: tuple[Path, list[dict[str, Any]]],
                                                                 tmp_path: Path) -> None:
    folder, rows = suite
    lines = [_line(row, "1") for row in rows]
    lines[0] = _line(rows[0], None, error="timeout")
    result = _score(tmp_path / "run", folder, lines)
    assert result.exit_code == 0 and result.exception is None, result.output
    summary = json.loads((tmp_path / "run" / "score" / "summary.json").read_text(encoding="utf-8"))
    assert summary["failed"] == 1
    abstained = (tmp_path / "run" / "score" / "abstention.csv").read_text(encoding="utf-8")
    condition = rows[0]["cell"]["condition"]
    assert f"m,{condition}," in abstained and sum(
        int(line.split(",")[3]) for line in abstained.splitlines()[1:]) == 1


def test_a_result_of_an_item_the_suite_lacks_is_refused_at_its_row(suite: tuple[Path, list[dict[str, Any]]],
                                                                   tmp_path: Path) -> None:
    folder, rows = suite
    lines = [_line(row, "1") for row in rows]
    lines[2] = lines[2] | {"item_id": "feedfacefeedface"}
    result = _score(tmp_path / "run", folder, lines)
    assert result.exit_code == 1 and not isinstance(result.exception, AttributeError | KeyError | TypeError)
    assert "results.jsonl, row 3, column 'item_id': item feedfacefeedface is not in the suite" in result.output


def test_a_sample_the_suite_row_does_not_draw_is_refused_at_its_row(suite: tuple[Path, list[dict[str, Any]]],
                                                                     tmp_path: Path) -> None:
    """A stranger's results may name any sample: one beyond its row's `samples` is refused, not scored (nor does
    a huge one overflow the (item, sample) keys that pick each final row)."""
    folder, rows = suite
    lines = [_line(row, "1") for row in rows]
    lines.insert(3, _line(rows[2], "1") | {"sample": 2**62})
    result = _score(tmp_path / "run", folder, lines)
    assert result.exit_code == 1 and not isinstance(result.exception, AttributeError | KeyError | TypeError)
    assert "results.jsonl, row 4, column 'sample': sample index outside the item's samples" in result.output
