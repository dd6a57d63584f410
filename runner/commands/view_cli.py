"""`spec view`: write the transcript page of a run, a study or their score folder, and print its path."""

from __future__ import annotations

from pathlib import Path

import click

from spec_audits.base.terminal import echo
from spec_audits.runner.view_data import run_folders, write_view


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
    from spec_audits.runner.dispatch.build import score_headline

    _, score = run_folders(folder)
    path = write_view(folder, headline=score_headline(score))
    echo(str(path))
    echo(f"open it in a browser, e.g. file://{path.resolve()}")
