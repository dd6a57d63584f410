"""Render a report Document as Markdown (images linked relative to the report).

Every text in a Document is plain text, and much of it (suite, benchmark, factor, level and model names)
comes from someone else's suite or table, so each is written as text, never as Markdown or HTML: line
breaks become spaces, control characters are made visible (spec_audits.base.terminal), and every character that
could start markup where it stands (emphasis, links, images, inline HTML, code, headings, table cells,
math, a list at the start) is escaped with a backslash, which CommonMark and GitHub render as the
character itself. Characters that cannot (an underscore inside a word, a bracket not followed by a link
target) are left as they are, so the file stays readable."""

from __future__ import annotations

import re
from pathlib import Path

from spec_audits.base.terminal import visible
from spec_audits.runner.report.document import Document, Heading, Image, Paragraph, Table

_ALWAYS = re.compile(r"([\\`*<&|~$#])")  # code, emphasis, HTML, autolinks, entities, cells, strikeout, math, headings
_UNDERSCORE = re.compile(r"(?<![A-Za-z0-9])_|_(?![A-Za-z0-9])")  # an underscore inside a word is never emphasis
_LINK = re.compile(r"\](?=[(\[:])")  # the `](`, `][` or `]:` that would make a link, image or link definition
_BLOCK_START = re.compile(r"^([-+](?=\s|$)|\d{1,9}[.)](?=\s|$)|[>\[])")  # a list item, quote or definition


def text(value: str) -> str:
    """`value` as Markdown that renders exactly `value` (on one line)."""
    flat = visible(" ".join(value.splitlines())).strip()
    escaped = _LINK.sub(r"\\]", _UNDERSCORE.sub(r"\\_", _ALWAYS.sub(r"\\\1", flat)))
    return _BLOCK_START.sub(lambda m: m.group(1)[:-1] + "\\" + m.group(1)[-1], escaped)


def render_markdown(doc: Document, base: Path) -> str:
    lines = [f"# {text(doc.title)}", ""]
    for block in doc.blocks:
        if isinstance(block, Heading):
            lines += ["#" * block.level + " " + text(block.text), ""]
        elif isinstance(block, Paragraph):
            lines += [text(block.text), ""]
        elif isinstance(block, Table):
            lines.append("| " + " | ".join(text(h) for h in block.header) + " |")
            lines.append("|" + "---|" * len(block.header))
            lines += ["| " + " | ".join(text(c) for c in row) + " |" for row in block.rows]
            lines.append("")
        elif isinstance(block, Image):
            lines += [
                f"![{text(block.caption)}]({block.path.relative_to(base).as_posix()})",
                "",
                f"*{text(block.caption)}*",
                "",
            ]
    return "\n".join(lines)
