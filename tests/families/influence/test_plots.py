"""Bar labels sit above their error bars, so an interval never strikes a value through; n/a is written."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np

from spec_audits.families.influence.plots import _bars


def test_each_label_sits_above_its_bar_and_its_interval() -> None:
    fig, ax = plt.subplots()
    _bars(ax, np.arange(3), [5.0, 12.0, None], [[2.0, 9.0], [10.0, 11.5], None], 0.5, "shift")
    labels = [(text.get_text(), text.xy[1]) for text in ax.texts]
    assert labels == [("5.0", 9.0), ("12.0", 12.0), ("n/a", 0.0)]
    assert all(text.get_va() == "bottom" and text.xyann == (0, 3) for text in ax.texts)
    plt.close(fig)
