"""The report as a list of format-neutral blocks, rendered to Markdown and HTML by their own modules.

Each family's report section builds a Document from its score folder (families/<name>/report.py). Its
plots are drawn only when the report is written (`draw_images`): `spec score` builds the same Document for
its first table and draws nothing.
"""

from __future__ import annotations

from collections.abc import Callable
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
    """A plot at `path`, which `draw(path)` writes (None: the file is there already). Drawing is left to
    `spec report` (draw_images), so a report built for its headline alone costs no plot."""

    path: Path
    caption: str
    draw: Callable[[Path], object] | None = field(default=None, compare=False, repr=False)


Block = Heading | Paragraph | Table | Image


@dataclass
class Document:
    title: str
    blocks: list[Block] = field(default_factory=list)


def draw_images(doc: Document) -> list[Path]:
    """Draw each Image of `doc` that is not drawn yet (its folder made first); every Image's path, in order."""
    for block in doc.blocks:
        if isinstance(block, Image) and block.draw is not None:
            block.path.parent.mkdir(parents=True, exist_ok=True)
            block.draw(block.path)
    return [block.path for block in doc.blocks if isinstance(block, Image)]
