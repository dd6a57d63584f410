"""What every family's plots share so a reader can trust them: "no data" drawn unlike any value, text that
stays readable on every cell colour, a panel that cannot be drawn saying why, and matplotlib itself, loaded
by the first plot drawn (a `spec score` draws none, and never imports it)."""

from __future__ import annotations

from functools import cache
from types import ModuleType
from typing import Any

NO_DATA = "hatched grey: no data"


@cache
def pyplot() -> ModuleType:
    """matplotlib.pyplot, drawing into files (Agg), a name with `$...$` in it drawn as text, never TeX."""
    import matplotlib

    matplotlib.use("Agg")
    matplotlib.rcParams["text.parse_math"] = False
    import matplotlib.pyplot

    return matplotlib.pyplot


def no_data_background(ax: Any) -> None:
    """Hatch the axes behind a heatmap: cells without data (NaN, drawn transparent) show grey hatching, never
    the colour of 0."""
    from matplotlib.patches import Rectangle

    ax.add_patch(Rectangle((0, 0), 1, 1, transform=ax.transAxes, facecolor="#d0d0d0", edgecolor="#9a9a9a",
                           hatch="///", linewidth=0, zorder=-1))


def text_colour(rgba: tuple[float, ...]) -> str:
    """Black or white, whichever reads better on a cell of colour `rgba` (WCAG relative luminance)."""

    def channel(c: float) -> float:
        return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4

    red, green, blue = (channel(c) for c in rgba[:3])
    luminance = 0.2126 * red + 0.7152 * green + 0.0722 * blue
    # contrast with black (L + 0.05) / 0.05 against white 1.05 / (L + 0.05): they meet at L = 0.179
    return "black" if luminance > 0.179 else "white"


def cannot_draw(ax: Any, title: str, why: str) -> None:
    """A panel with nothing to plot: its title and, in the frame, why it is empty."""
    ax.set_title(title)
    ax.set_xticks([])
    ax.set_yticks([])
    ax.text(0.5, 0.5, f"not drawn:\n{why}", ha="center", va="center", transform=ax.transAxes, wrap=True,
            fontsize=9, color="#444444")
