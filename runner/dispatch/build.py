"""build_report(): read a `spec score` folder, let its family build the report, write report.md and report.html."""

from __future__ import annotations

import json
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from spec_audits.base.safe_files import DOCUMENT_BYTES, present, read_bytes_capped
from spec_audits.dispatch import registry
from spec_audits.runner.files_out import write_text
from spec_audits.runner.report.cold import first_table, headline, readable, runs_behind
from spec_audits.runner.report.document import Document, Table, draw_images
from spec_audits.runner.report.html import render_html
from spec_audits.runner.report.markdown import render_markdown
from spec_audits.runner.score_input import ScoreInputError
from spec_audits.runner.view_data import view_for_report

SUMMARY = "summary.json"


def score_folder(folder: Path) -> Path:
    """The `spec score` folder `folder` names: itself, or the score/ folder `spec score RUN` writes inside a run
    (or a study); a located error saying which command to run when there is none."""
    for candidate in (folder, folder / "score"):
        if (candidate / SUMMARY).is_file():
            return candidate
    if (folder / "run.json").is_file() or (folder / "study.json").is_file():
        problem = f"holds no score yet: run `spec score {folder}` first, then `spec report {folder}`"
    else:
        problem = (f"has no {SUMMARY}: give the folder `spec score` wrote (RUN/score by default, or its -o "
                   "folder)")
    raise ScoreInputError(folder, problem)


RESCORE = "is it a `spec score` folder made by this version? score the run again with `spec score`"


def report_document(score_dir: Path, plots: Path) -> Document:
    """The family's report of `score_dir` (its plots to be drawn into `plots`), made readable cold (cold.py)."""
    summary_path = score_folder(score_dir) / SUMMARY
    name = _summary(summary_path).get("family")
    family = registry.get(str(name))
    if family is None:
        raise ScoreInputError(summary_path, f"names no known analysis family (family: {name!r}; known: "
                              f"{', '.join(registry.names())}); score the run again with `spec score`",
                              column="family")
    with _as_written(score_dir):
        doc = family.report(score_dir, plots)
    return readable(doc, score_folder(score_dir))


def score_lines(score_dir: Path, scored: str) -> list[str]:
    """What `spec score` prints after its own lines: the report's first table and the commands to run next
    (`scored`, the folder or file the user scored); nothing for a score `spec report` cannot read. No plot is
    drawn (a plug-in's report that draws its own plots draws them into a temporary folder)."""
    if not (score_dir / SUMMARY).is_file():
        return []
    with tempfile.TemporaryDirectory() as plots:
        lines = headline(report_document(score_dir, Path(plots)))
    transcripts = [f"      spec view {scored}     (every answer's transcript)"] if runs_behind(score_dir) else []
    return ["", *lines, "", f"next: spec report {score_dir}     (report.html and report.md, with plots)",
            *transcripts]


def score_headline(score_dir: Path) -> tuple[Table, str] | None:
    """The first table of the report of a `spec score` folder (None when there is none), no plot drawn."""
    if not (score_dir / SUMMARY).is_file():
        return None
    with tempfile.TemporaryDirectory() as plots:
        return first_table(report_document(score_dir, Path(plots)))


def build_report(score_dir: Path, out: Path) -> list[Path]:
    """Write the report files (and plots/*.png) into `out` and return their paths."""
    doc = report_document(score_dir, out / "plots")
    out.mkdir(parents=True, exist_ok=True)
    with _as_written(score_dir):
        images = draw_images(doc)
    md, html = out / "report.md", out / "report.html"
    view = view_for_report(score_folder(score_dir), out, first_table(doc))
    write_text(md, render_markdown(doc, out))
    write_text(html, render_html(doc, None if view is None else view.name))
    return [html, md, *([] if view is None else [view]), *images]


def _summary(path: Path) -> dict[str, Any]:
    if not present(path):
        raise ScoreInputError(path, "file not found (run `spec score` first)")
    try:
        summary = json.loads(read_bytes_capped(path, DOCUMENT_BYTES))
    except json.JSONDecodeError as err:
        raise ScoreInputError(path, f"invalid JSON: {err.msg}", row=err.lineno) from None
    except UnicodeDecodeError as err:
        raise ScoreInputError(path, f"not UTF-8 text ({err.reason} at byte {err.start})") from None
    if not isinstance(summary, dict):
        raise ScoreInputError(path, f"holds a JSON {type(summary).__name__}, not an object; {RESCORE}")
    return summary


@contextmanager
def _as_written(score_dir: Path) -> Iterator[None]:
    """Build (or draw) the family's report of `score_dir`. Its files are ours, but a folder may be damaged or
    edited (or come from someone else), so what does not have the shape `spec score` writes is a located error."""
    try:
        yield
    except KeyError as err:
        raise ScoreInputError(score_dir, f"summary.json or a table beside it lacks the entry {err}; "
                              f"{RESCORE}") from None
    except (TypeError, ValueError, IndexError, AttributeError) as err:  # pandas' parser errors are ValueErrors
        raise ScoreInputError(score_dir, f"summary.json or a table beside it is not as `spec score` writes it "
                              f"({err}); {RESCORE}") from None
