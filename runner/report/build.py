"""build_report(): read a `spec score` folder, let its family build the report, write report.md and report.html."""

from __future__ import annotations

import json
from pathlib import Path

from families import registry
from runner.report.document import Image
from runner.report.html import render_html
from runner.report.markdown import render_markdown
from runner.score_input import ScoreInputError

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


def build_report(score_dir: Path, out: Path) -> list[Path]:
    """Write the report files (and plots/*.png) into `out` and return their paths."""
    summary_path = score_folder(score_dir) / SUMMARY
    try:
        name = json.loads(summary_path.read_text(encoding="utf-8")).get("family")
    except json.JSONDecodeError as err:
        raise ScoreInputError(summary_path, f"invalid JSON: {err.msg}", row=err.lineno) from None
    family = registry.get(str(name))
    if family is None:
        raise ScoreInputError(summary_path, f"names no known analysis family (family: {name!r}; known: "
                              f"{', '.join(registry.names())}); score the run again with `spec score`",
                              column="family")
    doc = family.report(score_dir, out / "plots")
    out.mkdir(parents=True, exist_ok=True)
    md, html = out / "report.md", out / "report.html"
    md.write_text(render_markdown(doc, out), encoding="utf-8")
    html.write_text(render_html(doc), encoding="utf-8")
    return [html, md, *(block.path for block in doc.blocks if isinstance(block, Image))]
