"""The options influence scoring adds to `spec score` (the family declares them; runner/dispatch/score_cli.py
shows them)."""

from __future__ import annotations

from pathlib import Path

import click

SCORE_FLAGS: tuple[click.Option, ...] = (
    click.Option(["--alpha"], type=float, default=None, help="Significance level [manifest analysis.alpha or 0.05]."),
    click.Option(
        ["--asym-variance"],
        type=click.Choice(["2v0", "4v0"]),
        default="2v0",
        show_default=True,
        help="Var(Asym) = V_A + V_B + 2V_0 (paper's repository) or + 4V_0 (exact delta method).",
    ),
    click.Option(["--unpooled"], is_flag=True, help="Unpooled SE in the two-proportion z test (default pooled)."),
    click.Option(["--bootstrap"], type=int, default=None, help="Cluster-bootstrap resamples [manifest or 5000]."),
    click.Option(["--seed"], type=int, default=0, show_default=True, help="Bootstrap seed."),
    click.Option(
        ["--noise", "noise_dir"],
        multiple=True,
        type=click.Path(exists=True, file_okay=False, path_type=Path),
        help="Baseline-replicate run or study folders (spec run --replicate 1 --only condition=baseline), each "
        "paired with the scored run of its model: adds the noise floor (App. N). Repeatable.",
    ),
    click.Option(["--noise-f0"], type=click.Choice(["paper", "release"]), default=None,
                 help="Noise drift of f0 = share choosing group B (paper, default) or the second option of each "
                 "comparison's key (release)."),
    click.Option(["--noise-flips"], type=click.Choice(["prompt", "comparison"]), default=None,
                 help="Modal flips per prompt (comparison x display order, default) or per comparison pooled over "
                 "display orders (release)."),
    click.Option(
        ["--parent"],
        type=click.Path(exists=True, file_okay=False, path_type=Path),
        multiple=True,
        help="Follow-up probe runs: the main run's score folder, whose conditions give each probed trial its kind. "
        "Repeatable: one per benchmark when probe runs of several benchmarks are scored together (Tab. 22's "
        "pooled row).",
    ),
    click.Option(
        ["--human-labels"],
        type=click.Path(exists=True, dir_okay=False, path_type=Path),
        help="With --parent: CSV item_id,sample,label of human-labelled probe replies, to check the judge against.",
    ),
)
