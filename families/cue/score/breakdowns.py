"""The paper's appendix breakdowns: status bias (App. 17, methods §5.10), topics (App. 24), the
wrong-vs-unparsable split of the solved check (Table 6), and models excluded for abstaining (App. 9)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from spec_audits.families.cue.score.events import by_group, parsable
from spec_audits.families.cue.score.metrics import CONDITION, rate_table

SETTING = ["model", *CONDITION, "consequences"]


def status_bias(frame: pd.DataFrame, attributes: tuple[str, ...]) -> pd.DataFrame:
    """Could-be yes-rate (%) per model, condition, setting, person status and group, over parsable
    Could-be replies: how often each group is identified as a good / neutral / bad described person."""
    could = frame[(frame["probe"] == "could_be") & (frame["format"] != "neutral") & parsable(frame)]
    answers = could[[*SETTING, "status", *attributes]].assign(yes=could["answer"] == "yes")
    grouped = by_group(answers, attributes).groupby([*SETTING, "status", "dimension", "group"], dropna=False)["yes"]
    table = grouped.agg(yes_rate="mean", replies="size").reset_index()
    return table.assign(yes_rate=100 * table["yes_rate"])


def topic_rates(events: pd.DataFrame) -> pd.DataFrame:
    """Favor, Against and Net per model, condition, setting and topic, over (item, individual) pairs
    (each answer counted once, not once per group)."""
    return rate_table(events.groupby([*SETTING, "topic"], dropna=False))


def solved_split(frame: pd.DataFrame, attributes: tuple[str, ...]) -> pd.DataFrame:
    """Puzzled Could-be replies per model, band and setting: `correct` (every attribute right, gender and
    race in the paper), `wrong` (all given, not all right) and `unparsable` (not every attribute to read)."""
    could = frame[(frame["format"] == "puzzled") & (frame["probe"] == "could_be")]
    given = pd.Series(bool(attributes), index=could.index)
    for attribute in attributes:
        given &= could[f"said_{attribute}"] != ""
    outcome = np.select([could["identified"].astype(bool), given], ["correct", "wrong"], "unparsable")
    counts = could.assign(outcome=outcome).groupby(SETTING, dropna=False)["outcome"].value_counts().unstack(
        fill_value=0)
    return counts.reindex(columns=["correct", "wrong", "unparsable"], fill_value=0).reset_index()


def abstainers(frame: pd.DataFrame, threshold: float) -> pd.DataFrame:
    """Each model's What-if abstention over Direct and Puzzled answers, and whether it exceeds
    `threshold` (the paper drops Command R7B, 91.3%, from its bias tables)."""
    cued = frame[(frame["probe"] == "what_if") & (frame["format"] != "neutral")]
    rate = (~parsable(cued)).groupby(cued["model"]).mean().rename("what_if_abstention").reset_index()
    return rate.assign(excluded=rate["what_if_abstention"] > threshold)
