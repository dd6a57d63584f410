"""The cue-visibility report section: capability, macro Net and cue gap per condition, the solved split,
abstention (and the abstention screen), the Net-by-group plot and, with several models, their paired
comparisons, all from the files `spec score` wrote
(summary.json, conditions.csv)."""

from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import Any

import pandas as pd

from spec_audits.families.cue.score.outputs import plot_net
from spec_audits.sdk import (
    Document,
    Heading,
    Image,
    Paragraph,
    Table,
    comparison_blocks,
    fmt,
    read_csv,
    read_score_folder,
)

SECTIONS = (
    ("capability", "Capability: Could-be replies that identify every hidden attribute"),
    ("macro_net", "Net bias (Favor − Against), macro-averaged over groups"),
    ("macro_gap", "Cue gap: Direct Net − Puzzled Net (> 0: less favourable without the label)"),
    ("shift", "Shift of the Against and Favor rates, Puzzled − Direct"),
    ("solved_split", "Solved check: Puzzled Could-be replies correct, wrong or unparsable (Table 6)"),
    ("abstention", "Abstention (answers that are not a valid option)"),
    ("sign_tests", "Sign tests across models"),
)

KEY_ORDER = ("view", "model", "format", "difficulty", "probe", "consequences", "dimension", "group")
"""Condition columns first, in this order; the statistics after them."""


def cue_report(score_dir: Path, plots_dir: Path) -> Document:
    """The report of a `spec score` folder of a cue-visibility run."""
    conditions_path, summary = read_score_folder(score_dir, "conditions.csv")
    doc = Document(f"Cue-visibility audit: {summary['suite']}")
    attributes = " and ".join(summary.get("attributes", ())) or "none"
    doc.blocks.append(Paragraph(
        f"Groups by the hidden attributes {attributes}. {summary['answers']} probe answers from "
        f"{len(summary['models'])} model(s) ({', '.join(summary['models'])}); {summary['failed']} failed calls left "
        f"out; abstention rate {fmt.pct(summary['abstention_rate'])}. Net, gaps and shifts are in percentage "
        "points; both_correct and abstention rates are shares (0-1). View parsable counts every parsable "
        "What-if answer, solved only Puzzled answers whose individual was solved (A5)."))
    doc.blocks.append(Image(plots_dir / "net_by_group.png", "Net bias per group: Direct vs each Puzzled difficulty "
                            "(mean over models).", partial(plot_net, _read_conditions(conditions_path),
                                                            tuple(summary.get("bands", ())))))
    for key, title in SECTIONS:
        if key in summary:
            doc.blocks.append(Heading(title))
            doc.blocks.append(_table(summary[key]))
    screen = summary.get("abstention_screen")
    if screen:
        doc.blocks.append(Heading("Models screened by What-if abstention"))
        doc.blocks.append(Paragraph(f"Models whose What-if abstention exceeds {fmt.pct(screen['threshold'])} are "
                                    "left out of every Net, gap, shift, sign-test and ranking table above."))
        doc.blocks.append(_table(screen["models"]))
    ranking = summary.get("ranking")
    if ranking and "tau" in ranking:
        doc.blocks.append(Heading("Model ranking: Direct vs Puzzled"))
        doc.blocks.append(Paragraph(f"Kendall τ = {fmt.num(ranking['tau'], 3)} (p = {fmt.num(ranking['p'], 3)}) "
                                    f"between rankings by macro Net under Direct and Puzzled {ranking['difficulty']}."))
    if "comparisons" in summary:
        doc.blocks.extend(comparison_blocks(summary["comparisons"], plots_dir))
    return doc


def _read_conditions(path: Path) -> pd.DataFrame:
    conditions = read_csv(path, keep_default_na=False, na_values=[""])
    if "consequences" in conditions.columns:
        conditions["consequences"] = conditions["consequences"].astype(str).eq("True")
    if "difficulty" in conditions.columns:
        conditions["difficulty"] = conditions["difficulty"].fillna("")
    return conditions


def _table(records: list[dict[str, Any]]) -> Table | Paragraph:
    if not records:
        return Paragraph("Nothing to show: no answer reached this statistic.")
    header = sorted(records[0], key=lambda k: (KEY_ORDER.index(k) if k in KEY_ORDER else len(KEY_ORDER), k))
    return Table(header, [[_cell(row.get(key)) for key in header] for row in records])


def _cell(value: Any) -> str:
    if value is None or value == "":
        return "—" if value == "" else "n/a"
    if isinstance(value, float):
        return fmt.num(value, 3)
    return str(value)
