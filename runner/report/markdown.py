"""Render a report Document as Markdown (images linked relative to the report)."""

from __future__ import annotations

from pathlib import Path

from runner.report.document import Document, Heading, Image, Paragraph, Table


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def render_markdown(doc: Document, base: Path) -> str:
    lines = [f"# {doc.title}", ""]
    for block in doc.blocks:
        if isinstance(block, Heading):
            lines += ["#" * block.level + " " + block.text, ""]
        elif isinstance(block, Paragraph):
            lines += [block.text, ""]
        elif isinstance(block, Table):
            lines.append("| " + " | ".join(_cell(h) for h in block.header) + " |")
            lines.append("|" + "---|" * len(block.header))
            lines += ["| " + " | ".join(_cell(c) for c in row) + " |" for row in block.rows]
            lines.append("")
        elif isinstance(block, Image):
            lines += [
                f"![{block.caption}]({block.path.relative_to(base).as_posix()})",
                "",
                f"*{block.caption}*",
                "",
            ]
    return "\n".join(lines)
