"""The forest plot's legend names red only when a contrast is drawn red (issue 36: "red: significant" under a
plot with nothing red misleads a reader)."""

from __future__ import annotations

from spec_audits.families.effects.plots import legend


def test_the_legend_is_true_of_the_plot() -> None:
    assert legend([{"significant": False}, {}]) == "none significant after BH-FDR (all blue)"
    assert legend([{"significant": False}, {"significant": True}]) == "red: significant after BH-FDR, blue: not"
