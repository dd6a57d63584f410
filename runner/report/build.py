"""build_report(): read a `spec score` folder and write report.md, report.html and plots/*.png."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from runner.report.document import Image, build_document
from runner.report.html import render_html
from runner.report.markdown import render_markdown
from runner.report.plots import all_plots
from runner.score.errors import ScoreInputError


def build_report(score_dir: Path, out: Path) -> list[Path]:
    """Write the report files into `out` and return their paths."""
    for name in ("summary.json", "conditions.csv"):
        if not (score_dir / name).is_file():
            raise ScoreInputError(score_dir / name, "file not found (run `spec score` first)")
    summary = json.loads((score_dir / "summary.json").read_text(encoding="utf-8"))
    conditions = pd.read_csv(score_dir / "conditions.csv", keep_default_na=False, na_values=[""])
    plots = all_plots(summary, conditions, out / "plots")
    images = {key: [Image(path, caption) for path, caption in items] for key, items in plots.items()}
    doc = build_document(summary, images)
    md, html = out / "report.md", out / "report.html"
    md.write_text(render_markdown(doc, out), encoding="utf-8")
    html.write_text(render_html(doc), encoding="utf-8")
    return [html, md, *(image.path for items in images.values() for image in items)]
