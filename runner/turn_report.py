"""Turn statistics for every design (docs/scoring.md, "Flips between answered turns"), written by `spec score`
whatever the family: for runs whose rows hold two or more answered turns, flip rates per block, model, arm
and factor level (turn_flips.csv), McNemar's exact test per meaning (turn_mcnemar.csv), and, when several
blocks are scored together, each pair of blocks compared explicitly (turn_comparisons.csv).

A block is one suite and, in a suite of several designs, one design: runs of different suites or designs
are never pooled. Blocks are compared only as a labelled difference of flip rates with Newcombe's interval
and Fisher's exact test, never averaged.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from itertools import combinations
from pathlib import Path
from typing import Any

import pandas as pd
from scipy.stats import fisher_exact

from spec_audits.contract.reader import RESULTS_FILE, read_manifest, read_run, scan_run, suite_dir_of
from spec_audits.contract.suite_model import SuiteRow
from spec_audits.runner.files_out import write_csv
from spec_audits.runner.score_input import scored_results
from spec_audits.runner.turn_flips import flip_rates, mcnemar_by_meaning, pairs
from spec_audits.stats.intervals import newcombe

ALL = "all"  # the `by` of a block's lines over all its pairs
MAX_LEVELS = 12  # a cell key with 2..MAX_LEVELS values is an arm or factor: its levels get lines of their own
NOT_LEVELS = ("item_id", "sample", "model", "first", "last", "pushed", "meanings", "block", "design")
ALPHA = 0.05


def turn_pairs(runs: list[Path]) -> pd.DataFrame | None:
    """Every run's pairs labelled by block (suite, and design where the suite has several); None when no row
    of these runs holds two answered turns."""
    tables = []
    for run in runs:
        if not _answers_turns(run):  # a stream that holds nothing: the suite is read whole only for conversations
            continue
        info, suite = read_run(run)
        manifest, _ = read_manifest(suite_dir_of(run, info))
        table = pairs(suite.rows, scored_results(run / RESULTS_FILE))
        design = table["design"].astype(str) if "design" in table.columns else None
        table["block"] = manifest.suite if design is None else manifest.suite + "/" + design
        tables.append(table)
    return pd.concat(tables, ignore_index=True) if tables else None


def _answers_turns(run: Path) -> bool:
    """Whether a row of the run's suite holds an answered turn (Message.answer), read as a stream."""
    found = False

    def visit(offset: int, row: SuiteRow) -> None:
        nonlocal found
        found = found or any(message.answer is not None for message in row.messages)

    scan_run(run, visit)
    return found


def _levels(table: pd.DataFrame) -> list[str]:
    """The cell keys that are arms or factors: 2 to MAX_LEVELS distinct values over these pairs."""
    return [key for key in table.columns if key not in NOT_LEVELS
            and 2 <= table[key].nunique(dropna=False) <= MAX_LEVELS]


Stats = Callable[[pd.DataFrame, Sequence[str]], pd.DataFrame]


def _long(table: pd.DataFrame, stats: Stats) -> pd.DataFrame:
    """`stats` per block and model over all pairs (by = all), then per level of every arm or factor."""
    parts = [stats(table, ["block", "model"]).assign(by=ALL, level=ALL)]
    for key in _levels(table):
        part = stats(table.astype({key: object}).fillna({key: "none"}), ["block", "model", key])
        parts.append(part.rename(columns={key: "level"}).assign(by=key, level=lambda f: f["level"].astype(str)))
    out = pd.concat(parts, ignore_index=True)
    first = ["block", "model", "by", "level"]
    return pd.DataFrame(out[[*first, *(c for c in out.columns if c not in first)]])


def comparisons(flips: pd.DataFrame) -> pd.DataFrame:
    """Each pair of blocks a model was scored on: the difference of their flip rates (first minus second),
    Newcombe's interval and Fisher's exact p; absent with its reason where a block has no pair."""
    overall = flips[flips["by"] == ALL]
    out = []
    for model, lines in overall.groupby("model", sort=True):
        for (_, one), (_, two) in combinations(lines.sort_values("block").iterrows(), 2):
            row = {"model": model, "block": one["block"], "versus": two["block"], "flips": int(one["flips"]),
                   "pairs": int(one["pairs"]), "versus_flips": int(two["flips"]), "versus_pairs": int(two["pairs"])}
            out.append({**row, **_difference(row)})
    return pd.DataFrame(out)


def _difference(row: dict[str, Any]) -> dict[str, Any]:
    k1, n1, k2, n2 = row["flips"], row["pairs"], row["versus_flips"], row["versus_pairs"]
    if not n1 or not n2:
        return {"difference": None, "ci_low": None, "ci_high": None, "fisher_p": None,
                "absent": "a block with no pair with both answers valid"}
    low, high = newcombe(k1, n1, k2, n2, ALPHA)
    _, p = fisher_exact([[k1, n1 - k1], [k2, n2 - k2]])
    return {"difference": k1 / n1 - k2 / n2, "ci_low": float(low), "ci_high": float(high), "fisher_p": float(p),
            "absent": None}


def write_turn_statistics(runs: list[Path], out: Path) -> list[str]:
    """turn_flips.csv, turn_mcnemar.csv and (several blocks) turn_comparisons.csv under `out`; lines to print
    (none when no row holds two answered turns)."""
    table = turn_pairs(runs)
    if table is None:
        return []
    flips = _long(table, flip_rates)
    write_csv(flips, out / "turn_flips.csv")
    write_csv(_long(table, mcnemar_by_meaning), out / "turn_mcnemar.csv")
    lines = [_line(line) for _, line in flips[flips["by"] == ALL].iterrows()]
    if flips["block"].nunique() > 1:
        compared = comparisons(flips)
        write_csv(compared, out / "turn_comparisons.csv")
        lines += [_compared(line) for _, line in compared.iterrows()]
    return lines


def _line(line: pd.Series) -> str:
    share = (f"{line['flip_rate']:.1%} [{line['ci_low']:.1%}, {line['ci_high']:.1%}]" if line["pairs"]
             else "absent (no pair with both answers valid)")
    toward = f"; {int(line['toward'])} toward the pushed option" if pd.notna(line.get("toward")) else ""
    return (f"  {line['block']} | {line['model']}: flips after the conversation's turns {share} "
            f"({int(line['flips'])}/{int(line['pairs'])}){toward} -> turn_flips.csv")


def _compared(line: pd.Series) -> str:
    if line["absent"] is not None and not pd.isna(line["absent"]):
        return f"  {line['block']} - {line['versus']} | {line['model']}: flip-rate difference absent ({line['absent']})"
    return (f"  {line['block']} - {line['versus']} | {line['model']}: flip-rate difference "
            f"{line['difference']:+.1%} [{line['ci_low']:+.1%}, {line['ci_high']:+.1%}], Fisher p = "
            f"{line['fisher_p']:.3g} -> turn_comparisons.csv")
