"""The report as a list of format-neutral blocks, rendered to Markdown and HTML by their own modules.

Each family's report section builds a Document from its score folder (families/<name>/report.py).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path


@dataclass(frozen=True)
class Heading:
    text: str
    level: int = 2


@dataclass(frozen=True)
class Paragraph:
    text: str


@dataclass(frozen=True)
class Table:
    header: list[str]
    rows: list[list[str]]


@dataclass(frozen=True)
class Image:
    path: Path
    caption: str


Block = Heading | Paragraph | Table | Image


@dataclass
class Document:
    title: str
    blocks: list[Block] = field(default_factory=list)
