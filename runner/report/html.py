"""Render a report Document as one self-contained HTML file (PNG plots embedded as data URIs).

Every text is escaped (a stranger's suite, factor, level or model name is shown, never parsed as markup)
and its control characters made visible (spec_audits.base.terminal)."""

from __future__ import annotations

import base64
import html

from spec_audits.base.safe_files import DOCUMENT_BYTES, read_bytes_capped
from spec_audits.base.terminal import visible
from spec_audits.runner.report.document import Document, Heading, Image, Paragraph, Table


def escape(text: str) -> str:
    return html.escape(visible(text))

STYLE = """
body { font-family: system-ui, sans-serif; max-width: 1100px; margin: 2em auto; color: #222; }
table { border-collapse: collapse; margin: 1em 0; font-size: 0.9em; }
th, td { border: 1px solid #ccc; padding: 0.25em 0.6em; text-align: right; }
th:first-child, td:first-child { text-align: left; }
th { background: #f3f3f3; }
figure { margin: 1.5em 0; } img { max-width: 100%; } figcaption { font-style: italic; color: #555; }
"""


def render_html(doc: Document, transcripts: str | None = None) -> str:
    """The page; `transcripts`, the file name of the `spec view` page beside it, is linked under the title."""
    parts = [
        f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>{escape(doc.title)}</title>',
        f"<style>{STYLE}</style></head><body>",
        f"<h1>{escape(doc.title)}</h1>",
    ]
    if transcripts is not None:
        parts.append(f'<p class="transcripts">The answers behind these numbers, cell by cell and row by row, with '
                     f'every transcript: <a href="{escape(transcripts)}">{escape(transcripts)}</a></p>')
    for block in doc.blocks:
        if isinstance(block, Heading):
            parts.append(f"<h{block.level}>{escape(block.text)}</h{block.level}>")
        elif isinstance(block, Paragraph):
            parts.append(f"<p>{escape(block.text)}</p>")
        elif isinstance(block, Table):
            head = "".join(f"<th>{escape(h)}</th>" for h in block.header)
            body = "".join("<tr>" + "".join(f"<td>{escape(c)}</td>" for c in row) + "</tr>" for row in block.rows)
            parts.append(f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>")
        elif isinstance(block, Image):
            data = base64.b64encode(read_bytes_capped(block.path, DOCUMENT_BYTES)).decode("ascii")  # no link followed
            parts.append(
                f'<figure><img src="data:image/png;base64,{data}" alt="{escape(block.caption)}">'
                f"<figcaption>{escape(block.caption)}</figcaption></figure>"
            )
    parts.append("</body></html>\n")
    return "\n".join(parts)
