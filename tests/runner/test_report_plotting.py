"""The shared plot helpers: "no data" drawn unlike 0, text readable on every cell colour, an empty panel
saying why (checked on rendered pixels, not on settings)."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from spec_audits.runner.report.plotting import cannot_draw, no_data_background, text_colour  # noqa: E402


def _pixel(fig: plt.Figure, ax: plt.Axes, x: float, y: float) -> np.ndarray:
    """The RGB colour drawn at data point (x, y)."""
    fig.canvas.draw()
    image = np.asarray(fig.canvas.buffer_rgba())[..., :3] / 255
    px, py = ax.transData.transform((x, y))
    return image[int(image.shape[0] - py), int(px)]


def test_a_cell_without_data_is_drawn_unlike_a_cell_of_zero() -> None:
    fig, ax = plt.subplots(figsize=(4, 2), dpi=100)
    no_data_background(ax)
    ax.imshow(np.ma.masked_invalid([[0.0, np.nan]]), cmap="RdBu_r", vmin=-0.3, vmax=0.3)
    zero, missing = _pixel(fig, ax, 0, 0), _pixel(fig, ax, 1, 0)
    plt.close(fig)
    assert np.abs(zero - 1).max() < 0.05  # RdBu_r's centre is white
    assert np.abs(missing - zero).max() > 0.15  # grey hatching, far from white


@pytest.mark.parametrize("value", [-0.3, -0.2, 0.0, 0.2, 0.3])
def test_cell_text_contrasts_with_its_cell(value: float) -> None:
    cmap = matplotlib.colormaps["RdBu_r"]
    colour = cmap((value + 0.3) / 0.6)
    chosen = text_colour(colour)
    assert chosen == {-0.3: "white", 0.0: "black", 0.3: "white"}.get(value, chosen)  # the darkest ends: white

    def luminance(rgb: tuple[float, ...]) -> float:
        lin = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in rgb[:3]]
        return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]

    text = 1.0 if chosen == "white" else 0.0
    lighter, darker = max(luminance(colour), text), min(luminance(colour), text)
    assert (lighter + 0.05) / (darker + 0.05) >= 4.5  # WCAG AA for normal text


def test_a_panel_that_cannot_be_drawn_says_why_inside_it() -> None:
    fig, ax = plt.subplots()
    cannot_draw(ax, "SCM gap", "too few donor cells")
    assert ax.get_title() == "SCM gap" and ax.texts[0].get_text() == "not drawn:\ntoo few donor cells"
    assert list(ax.get_xticks()) == [] and list(ax.get_yticks()) == []
    plt.close(fig)
