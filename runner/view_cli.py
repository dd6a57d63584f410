"""`spec view`: write the transcript page of a run, a study or their score folder, and print its path."""

from __future__ import annotations

from pathlib import Path

import click

from spec_audits.contract.reader import RUN_FILE
from spec_audits.runner.files_out import write_text
from spec_audits.runner.study import is_study
from spec_audits.runner.view_data import view_data
from spec_audits.runner.view_page import render_page
from spec_audits.terminal import echo

PAGE = "view.html"


def write_view(folder: Path, out: Path | None = None) -> Path:
    """Write view.html for `folder` into `out` (by default beside report.html when a score folder exists, else
    into `folder`) and return its path."""
    data, beside = view_data(folder)
    path = (out or beside) / PAGE
    path.parent.mkdir(parents=True, exist_ok=True)
    write_text(path, render_page(data))
    return path


def view_for_report(score_dir: Path, out: Path) -> Path | None:
    """The page `spec report` writes beside report.html (into `out`) when the score folder is the score/ folder
    of a run or study, whose answers it shows; None for a score folder of a published table."""
    parent = score_dir.resolve().parent
    if not (parent / RUN_FILE).is_file() and not is_study(parent):
        return None
    return write_view(parent, out)


@click.command("view")
@click.argument("folder", type=click.Path(exists=True, file_okay=False, path_type=Path))
def view(folder: Path) -> None:
    """Write view.html: headline figures, cells, rows and every row's transcript, with filters.

    FOLDER is a run, a study (several models) or the score/ folder inside either. The page is one
    self-contained file (no network): it goes beside report.html when the run is scored, else into FOLDER.

    \b
    Examples:
      spec view runs/triage-local
      spec view runs/triage-study/score
    """
    path = write_view(folder)
    echo(str(path))
    echo(f"open it in a browser, e.g. file://{path.resolve()}")
