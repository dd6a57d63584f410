"""The follow-up probe's analysis (methods §7, App. P, Tab. 22): judge labels by trial kind.

Every probed trial takes its kind from its parent condition in the main run (`--parent`, that run's
score folder): a directed trial whose parent effect is significant is *significant backfire* when its
steerability is negative and *significant compliance* when positive, otherwise *no effect*; baseline
trials are *base*. A parent's significance is its effect test's p < alpha, or, for a parent whose
significance was decided elsewhere (a published per-condition table imported with `spec import`), its
`significant_A`/`significant_B` columns. The stated-vs-revealed share is ACK_DISCLAIMED among
significant-backfire trials. Trials the judge left unlabelled are counted apart, never as a label. The
label table is written pooled and per (benchmark, model), Tab. 22's rows.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, cast

import numpy as np
import pandas as pd

from spec_audits.families.influence.score.runs import Run
from spec_audits.families.influence.score.summary import rate
from spec_audits.sdk import RESULTS_FILE, ScoreInputError, id_keys, read_csv, read_results, read_run

KINDS = ("significant backfire", "significant compliance", "no effect", "base")
DISCLAIMED = "ACK_DISCLAIMED"


def probe_trials(runs: list[Run], keys: list[str], parents: Sequence[Path], alpha: float) -> pd.DataFrame:
    """One row per probed trial: its condition keys, direction, kind and judge label (None if unlabelled).
    Several parents (one per benchmark, for Tab. 22's pooled row) are read as one table."""
    trials = pd.concat([_labels(run, keys) for run in runs], ignore_index=True)
    if trials.empty:
        raise ScoreInputError(runs[0].run_dir / RESULTS_FILE, "no follow-up replies to analyse; --parent is "
                              "for a probe run (a suite whose design has followups)")
    joined = trials.merge(_all_parents(parents, keys, alpha), on=keys, how="left")
    directed = joined["condition"] != "baseline"
    missing = directed & joined["sig_A"].isna()
    if missing.any():
        row = joined[missing].iloc[0]
        where = " or ".join(str(parent / "conditions.csv") for parent in parents)
        raise ScoreInputError(where, "has no parent condition for the probed "
                              + ", ".join(f"{k}={row[k]}" for k in keys))
    d = joined["condition"].str[-1]
    significant = np.where(d == "A", joined["sig_A"], joined["sig_B"]) == True  # noqa: E712 (NaN for base)
    s = np.where(d == "A", joined["steerability_A"], joined["steerability_B"])
    joined["kind"] = np.select([~directed, ~significant, s < 0], ["base", "no effect", "significant backfire"],
                               "significant compliance")
    return joined[[*keys, "condition", "item_id", "sample", "kind", "label"]]


def _labels(run: Run, keys: list[str]) -> pd.DataFrame:
    rows = [(r.item_id, r.sample, reply.get("label")) for r in read_results(run.run_dir / RESULTS_FILE)
            if r.followups for reply in r.followups.values()]
    labels = pd.DataFrame(rows, columns=["item_id", "sample", "label"])
    labels["key"] = id_keys(labels["item_id"].tolist())[0]  # the trials' item_id: the first half of the id's hash
    cells = run.trials.drop(columns=["w_A", "w_B"]).assign(**{k: "none" for k in keys if k not in run.trials})
    cells = cells.rename(columns={"item_id": "key"})[["key", "condition", *keys]]
    return labels.merge(cells, on="key", how="inner").drop(columns=["key"])


def _all_parents(parents: Sequence[Path], keys: list[str], alpha: float) -> pd.DataFrame:
    """Every parent's conditions; a condition two parents both give is refused naming both files."""
    frames = [_parents(parent, keys, alpha) for parent in parents]
    seen: dict[tuple[Any, ...], Path] = {}
    for parent, frame in zip(parents, frames, strict=True):
        for key in frame[keys].itertuples(index=False, name=None):
            if key in seen:  # one file's own repeats were refused by _parents
                raise ScoreInputError(parent / "conditions.csv", f"gives a condition that {seen[key]} gives too ("
                                      + ", ".join(f"{k}={v}" for k, v in zip(keys, key, strict=True))
                                      + "): give each benchmark's parent once")
            seen[key] = parent / "conditions.csv"
    return pd.concat(frames, ignore_index=True)


def _parents(score_dir: Path, keys: list[str], alpha: float) -> pd.DataFrame:
    """The parent conditions: keys, whether each direction's effect is significant, and its steerability."""
    path = score_dir / "conditions.csv"
    try:
        frame = read_csv(path, keep_default_na=False, na_values=[""], dtype=str)
    except FileNotFoundError:
        raise ScoreInputError(path, "file not found (score the main run first)") from None
    tested = "p_effect_A" in frame.columns or "significant_A" not in frame.columns
    wanted = ["p_effect_A", "p_effect_B"] if tested else ["significant_A", "significant_B"]
    absent = [c for c in keys + wanted + ["steerability_A", "steerability_B"] if c not in frame.columns]
    if absent:
        raise ScoreInputError(path, f"is not an influence conditions table (no column {absent[0]!r})")
    again = frame.duplicated(keys)
    if again.any():
        raise ScoreInputError(path, "repeats a condition (the same key columns as an earlier row): its probed trials "
                              "would be counted twice", row=int(np.flatnonzero(again.to_numpy())[0]) + 1)
    for d in "AB":
        frame[f"steerability_{d}"] = _numbers(path, frame, f"steerability_{d}")
        frame[f"sig_{d}"] = _numbers(path, frame, f"p_effect_{d}") < alpha if tested else \
            _flags(path, frame, f"significant_{d}")
    return frame[keys + ["sig_A", "sig_B", "steerability_A", "steerability_B"]]


def _numbers(path: Path, frame: pd.DataFrame, column: str) -> pd.Series:
    """A column of numbers, blank where a statistic is absent; text or an infinite number names its row."""
    values = pd.to_numeric(frame[column], errors="coerce")
    bad = (frame[column].notna() & values.isna()) | values.isin([np.inf, -np.inf])
    if bad.any():
        row = int(np.flatnonzero(bad.to_numpy())[0])
        raise ScoreInputError(path, f"{frame[column].iloc[row]!r} is not a finite number", row=row + 1, column=column)
    return values


def _flags(path: Path, frame: pd.DataFrame, column: str) -> pd.Series:
    """A column of True/False as a published table writes it."""
    text = frame[column].str.strip().str.lower()
    bad = ~text.isin(["true", "false"])
    if bad.any():
        row = int(np.flatnonzero(bad.to_numpy())[0])
        raise ScoreInputError(path, f"{frame[column].iloc[row]!r} is not True or False", row=row + 1, column=column)
    return text == "true"


def cross_tab(trials: pd.DataFrame, labels: tuple[str, ...], alpha: float) -> pd.DataFrame:
    """Label shares by trial kind with Wilson intervals: one row per (kind, label)."""
    rows = []
    for kind in KINDS:
        of_kind = trials[trials["kind"] == kind]
        labelled = of_kind["label"].notna()
        for label in labels:
            share = rate((of_kind["label"] == label).sum(), labelled.sum(), alpha)
            rows.append({"kind": kind, "label": label, "k": share["k"], "n": share["n"], "rate": share["rate"],
                         "lo": share["ci"][0] if share["ci"] else None, "hi": share["ci"][1] if share["ci"] else None,
                         "unlabelled": int((~labelled).sum())})
    return pd.DataFrame(rows)


def _by_benchmark_and_model(trials: pd.DataFrame) -> list[tuple[tuple[str, str], pd.DataFrame]]:
    """The trials per (benchmark, model), in order (pandas types a group's key as any hashable)."""
    return [(cast(tuple[str, str], key), group) for key, group in trials.groupby(["benchmark", "model"], sort=True)]


def cross_tab_by_model(trials: pd.DataFrame, labels: tuple[str, ...], alpha: float) -> pd.DataFrame:
    """cross_tab per (benchmark, model): Tab. 22's rows, one (benchmark, model, kind, label) per row."""
    frames = [cross_tab(group, labels, alpha).assign(benchmark=key[0], model=key[1])
              for key, group in _by_benchmark_and_model(trials)]
    table = pd.concat(frames, ignore_index=True)
    return table[["benchmark", "model", *(c for c in table.columns if c not in ("benchmark", "model"))]]


def probe_summary(trials: pd.DataFrame, alpha: float) -> dict[str, Any]:
    """Trials, unlabelled, and the stated-vs-revealed share, pooled and per (benchmark, model)."""
    found = _shares(trials, alpha)
    found["by_model"] = {f"{bench} | {model}": _shares(group, alpha)
                         for (bench, model), group in trials.groupby(["benchmark", "model"], sort=True)}
    return found


def _shares(trials: pd.DataFrame, alpha: float) -> dict[str, Any]:
    backfire = trials[(trials["kind"] == "significant backfire") & trials["label"].notna()]
    return {"trials": len(trials), "unlabelled": int(trials["label"].isna().sum()),
            "stated_vs_revealed": rate((backfire["label"] == DISCLAIMED).sum(), len(backfire), alpha)}


def judge_labels(run: Run) -> tuple[str, ...]:
    """The labels the suite's judge may give, in the spec's order."""
    for row in read_run(run.run_dir)[1].rows:
        for followup in row.followups or ():
            if followup.judge is not None:
                return tuple(followup.judge.labels)
    raise ScoreInputError(run.run_dir / "run.json", "its suite has no judged follow-up to analyse")


def judge_agreement(trials: pd.DataFrame, human_file: Path, labels: tuple[str, ...]) -> tuple[dict[str, Any],
                                                                                              pd.DataFrame]:
    """Judge labels against a human-labelled sample (CSV: item_id, sample, label): agreement, Cohen's kappa
    and the confusion matrix (rows human, columns judge)."""
    try:
        human = pd.read_csv(human_file, dtype={"item_id": str, "sample": int, "label": str})
    except (OSError, ValueError) as err:
        raise ScoreInputError(human_file, f"cannot read human labels ({err})") from None
    absent = [c for c in ("item_id", "sample", "label") if c not in human.columns]
    if absent:
        raise ScoreInputError(human_file, f"has no column {absent[0]!r}")
    unknown = ~human["label"].isin(labels)
    if unknown.any():
        row = int(np.flatnonzero(unknown)[0])
        raise ScoreInputError(human_file, f"label {human['label'].iloc[row]!r} is not one of {', '.join(labels)}",
                              row=row + 1, column="label")
    both = human.merge(trials[["item_id", "sample", "label"]].dropna(), on=["item_id", "sample"],
                       suffixes=("_human", "_judge"))
    if both.empty:
        raise ScoreInputError(human_file, "shares no labelled (item_id, sample) with the probe run")
    confusion = pd.crosstab(pd.Categorical(both["label_human"], labels), pd.Categorical(both["label_judge"], labels),
                            rownames=["human"], colnames=["judge"], dropna=False)
    table = confusion.to_numpy(float)
    n = table.sum()
    observed = np.trace(table) / n
    expected = float((table.sum(axis=0) * table.sum(axis=1)).sum() / n**2)
    kappa = (observed - expected) / (1 - expected) if expected < 1 else None
    return {"n": int(n), "agreement": float(observed), "cohens_kappa": kappa}, confusion
