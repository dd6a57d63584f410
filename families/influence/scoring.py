"""`spec score` for influence runs (one or several together) and counts tables -> conditions.csv + summary.json;
several models also get their paired differences (score/compare.py) -> comparisons.csv."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import click
import pandas as pd

from spec_audits.families.influence.record import InfluenceRecord
from spec_audits.families.influence.score import position
from spec_audits.families.influence.score.compare import model_comparisons
from spec_audits.families.influence.score.counts import CountsTable, counts_from_trials, read_counts_csv
from spec_audits.families.influence.score.flips import flip_rates, totals
from spec_audits.families.influence.score.noise import NoiseOptions, noise_floor, pair_replicates
from spec_audits.families.influence.score.options import Options
from spec_audits.families.influence.score.pipeline import score as score_counts
from spec_audits.families.influence.score.pipeline import write
from spec_audits.families.influence.score.probe import (
    cross_tab,
    cross_tab_by_model,
    judge_agreement,
    judge_labels,
    probe_summary,
    probe_trials,
)
from spec_audits.families.influence.score.runs import Run, load_run, pool_runs
from spec_audits.sdk import check_run_analysis, expand_runs, score_folder, unmap_freed_arrays, write_csv


def score_run(run_dir: Path, out: Path, options: dict[str, Any]) -> list[str]:
    """Score a run folder (its manifest's analysis supplies alpha and bootstrap unless given)."""
    return score_runs([run_dir], out, options)


def score_runs(run_dirs: list[Path], out: Path, options: dict[str, Any]) -> list[str]:
    """Score several runs together: one conditions table, BH within benchmark across all of them.

    The first run's analysis supplies alpha and bootstrap unless given."""
    unmap_freed_arrays()
    runs = [load_run(run_dir) for run_dir in run_dirs]
    if options.get("human_labels") is not None and not options.get("parent"):
        raise click.UsageError("--human-labels checks the probe's judge: give the main run's score folder "
                               "with --parent too")
    noise = _noise(runs, options)
    trials, keys, source = pool_runs(runs)
    settings = _settings(options, runs[0].analysis)
    tables: dict[str, Table] = {"flips.csv": flip_rates(trials, keys, settings.alpha),
                                "positions.csv": partial(position.item_table, trials, keys)}
    probe = _probe(runs, keys, options, settings.alpha, tables) if options.get("parent") else None
    paired = model_comparisons(trials, keys, source, settings.alpha) if len(runs) > 1 else None
    if paired is not None:
        tables["comparisons.csv"] = pd.DataFrame(paired["rows"])
    lines = _score(counts_from_trials(trials, keys, source), out, settings, noise, tables, probe, trials, paired)
    if probe is not None:
        share = probe["stated_vs_revealed"]
        lines.append(f"  probe: {probe['trials']} trials; ACK_DISCLAIMED among significant backfire "
                     f"{_pct(share['rate'])} ({share['k']}/{share['n']}) -> {out / 'probe.csv'}")
    return lines


Table = pd.DataFrame | Callable[[], pd.DataFrame]
"""A table of the score folder, or what builds it when it is written: positions.csv (one row per condition and item,
about 45 MB at a million trials) is built only then, so it is not held while the conditions are counted and scored,
which were `spec score`'s peak."""


def score_table(counts_file: Path, out: Path, options: dict[str, Any]) -> list[str]:
    """Score a published counts table (docs/suite-format.md); it has no items, so no noise floor or flips."""
    if options.get("noise_dir"):
        raise click.UsageError("--noise needs a RUN_DIR, not a counts table")
    return _score(read_counts_csv(counts_file), out, _settings(options, {}), None, {}, None)


def _noise(runs: list[Run], options: dict[str, Any]) -> dict[str, Any] | None:
    """The noise floor of the replicates given with --noise (runs or studies), each paired with its original."""
    replicate_dirs = options.get("noise_dir") or ()
    if isinstance(replicate_dirs, Path):
        replicate_dirs = (replicate_dirs,)
    if not replicate_dirs:
        if options.get("noise_f0") is not None or options.get("noise_flips") is not None:
            raise click.UsageError("--noise-f0 and --noise-flips define the noise floor: give the replicate "
                                   "runs with --noise")
        return None
    paths = expand_runs(tuple(replicate_dirs))
    for path in paths:  # read here, not by the dispatch, so checked here as the dispatch checks the scored runs
        check_run_analysis(path, InfluenceRecord)
    replicates = [load_run(path) for path in paths]
    settings = NoiseOptions(f0=options.get("noise_f0") or "paper", flips=options.get("noise_flips") or "prompt")
    return noise_floor(pair_replicates(runs, replicates), settings)


def _probe(runs: list[Run], keys: list[str], options: dict[str, Any], alpha: float,
           tables: dict[str, Table]) -> dict[str, Any]:
    """The probe's summary; its label-by-kind table (and the judge's confusion matrix) go into `tables`."""
    trials = probe_trials(runs, keys, options["parent"], alpha)
    labels = judge_labels(runs[0])
    tables["probe.csv"] = cross_tab(trials, labels, alpha)
    tables["probe_by_model.csv"] = cross_tab_by_model(trials, labels, alpha)
    found = probe_summary(trials, alpha)
    if options.get("human_labels") is not None:
        found["judge_validation"], confusion = judge_agreement(trials, options["human_labels"], labels)
        tables["judge_confusion.csv"] = confusion.reset_index()
    return found


def _settings(options: dict[str, Any], analysis: dict[str, Any]) -> Options:
    alpha, bootstrap = options.get("alpha"), options.get("bootstrap")
    return Options(
        alpha=alpha if alpha is not None else float(analysis.get("alpha", 0.05)),
        asym_variance=options.get("asym_variance", "2v0"),
        pooled_z=not options.get("unpooled", False),
        bootstrap=bootstrap if bootstrap is not None else int(analysis.get("bootstrap", 5000)),
        seed=options.get("seed", 0),
    )


def _score(counts: CountsTable, out: Path, settings: Options, noise: dict[str, Any] | None,
           tables: dict[str, Table], probe: dict[str, Any] | None,
           trials: pd.DataFrame | None = None, paired: dict[str, Any] | None = None) -> list[str]:
    scores = score_counts(counts, settings, noise, trials)
    flips = tables.get("flips.csv")
    if isinstance(flips, pd.DataFrame):
        for bench, rows in flips.groupby("benchmark", sort=True):
            scores.summary["benchmarks"][str(bench)]["flip_rates"] = {
                "all": totals(rows, settings.alpha),
                "by_influence": {str(inf): totals(sub, settings.alpha) for inf, sub in rows.groupby("influence")},
            }
    if probe is not None:
        scores.summary["probe"] = probe
    if paired is not None:
        scores.summary["comparisons"] = paired
    score_folder(out)
    for name, table in tables.items():
        write_csv(table if isinstance(table, pd.DataFrame) else table(), out / name, float_format="%.10g")
    write(scores, out)
    lines = [f"{len(scores.conditions)} conditions scored ({scores.summary['count_source_text']}) -> {out}"]
    return lines + [_headline_line(bench, r["headline"]) for bench, r in scores.summary["benchmarks"].items()]


def _headline_line(bench: str, headline: dict[str, Any]) -> str:
    shift = headline["mean_abs_shift"]["all"]
    asym = headline["asymmetry_among_neutral"]["binomial"]["raw"]
    bf = headline["backfire_among_significant"]
    return (
        f"  {bench}: mean |shift| {_absent(shift) or _pp(shift['mean_pp']) + ' p'}; "
        f"sig. asymmetry among baseline-neutral {_absent(asym) or _count(asym)}; "
        f"backfire among significant {_absent(bf) or _count(bf)}"
    )


def _absent(figure: dict[str, Any]) -> str:
    return f"absent ({figure['absent']})" if "absent" in figure else ""


def _count(r: dict[str, Any]) -> str:
    return f"{_pct(r['rate'])} ({r['k']}/{r['n']})"


def _pp(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.1f}"


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{100 * value:.1f}%"
