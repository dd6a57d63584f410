"""What makes any family's report readable cold, by someone who did not run it: the suite's name in the title,
a caveat when the embedded base model answered, and under each table a short "how to read this" for the
columns it has (what n, q, p, a logit shift are). Family-blind: it reads the runs behind a score folder and the
tables' headers, never a family's statistics."""

from __future__ import annotations

from pathlib import Path

from spec_audits.contract.reader import RUN_FILE, find_run_info, read_manifest, suite_dir_of
from spec_audits.contract.suite_terms import EMBEDDED_JUDGE
from spec_audits.runner.report.document import Block, Document, Paragraph, Table
from spec_audits.runner.study import is_study, study_runs

GLOSSARY = {
    "n": "n counts the answers behind the row (abstentions and failed calls left out)",
    "q (bh)": "q is p adjusted for every test in the table (Benjamini-Hochberg false discovery rate); "
              "* marks q below the level α the score used",
    "p": "p is the chance of a difference at least this large if the condition changed nothing",
    "shift": "shift is the level's mean minus the reference's",
    "interval": "interval is the confidence interval of the shift",
    "logit shift": "logit shift is the same shift on the log-odds scale, log(P/(1-P)) at the level minus at the "
                   "reference: a change near 0 or 1 counts more than one near 0.5",
    "se": "SE is the standard error of the coefficient",
    "coefficient": "coefficient is the regression's estimate for the term, on its link scale (logit for yes/no)",
    "mean |shift|": "mean |shift| is the mean absolute change of the share choosing an option when a cue is "
                    "added, in percentage points (pp: differences of percentages)",
    "flip rate": "flip rate is the share of answers that changed",
}
"""A table column (its header, lower-cased, before any parenthesis unless listed with it) -> what it means."""

EMBEDDED_CAVEAT = (f"Caveat: the embedded base model ({EMBEDDED_JUDGE}, 270M parameters, run offline) answered "
                   "this audit. It shows that the pipeline runs end to end, not how a deployed model behaves: its "
                   "answers are close to chance and its effects are no finding. Run the suite against the model "
                   "you audit with `spec run SUITE --model PROVIDER/MODEL`.")


def _term(header: str) -> str:
    text = header.strip().lower()
    return text if text in GLOSSARY else text.split(" (")[0]


def how_to_read(table: Table) -> Paragraph | None:
    """One line naming what the table's columns mean, for those the glossary knows; None when it knows none."""
    terms = list(dict.fromkeys(_term(header) for header in table.header if _term(header) in GLOSSARY))
    if not terms:
        return None
    return Paragraph("How to read this: " + "; ".join(GLOSSARY[term] for term in terms) + ".")


def runs_behind(score_dir: Path) -> list[Path]:
    """The run folders whose score `score_dir` is (the score/ folder of a run or a study); none for a score
    written elsewhere with -o or of a published table."""
    parent = score_dir.resolve().parent
    if (parent / RUN_FILE).is_file():
        return [parent]
    return study_runs(parent) if is_study(parent) else []


def readable(doc: Document, score_dir: Path) -> Document:
    """`doc` titled with the suite's name (unless its title names it already), opened with the embedded-model
    caveat when it answered, and with a "how to read this" line under each table."""
    infos = [info for info in (find_run_info(run) for run in runs_behind(score_dir)) if info is not None]
    title = doc.title
    if infos:
        manifest, _ = read_manifest(suite_dir_of(runs_behind(score_dir)[0], infos[0]))
        names = [name for name in (manifest.title, manifest.suite) if name]
        if not any(name in doc.title for name in names):  # a family title that names the suite already stays
            title = names[0] if doc.title in names[0] else f"{names[0]}: {doc.title}"
    blocks: list[Block] = [Paragraph(EMBEDDED_CAVEAT)] if any(i.model == EMBEDDED_JUDGE for i in infos) else []
    for block in doc.blocks:
        blocks.append(block)
        note = how_to_read(block) if isinstance(block, Table) else None
        if note is not None:
            blocks.append(note)
    return Document(title, blocks)


def first_table(doc: Document) -> tuple[Table, str] | None:
    """The report's first table, its headline, and the "how to read this" line under it ('' when none)."""
    for index, block in enumerate(doc.blocks):
        if isinstance(block, Table):
            after = doc.blocks[index + 1] if index + 1 < len(doc.blocks) else None
            note = after.text if isinstance(after, Paragraph) and after.text.startswith("How to read") else ""
            return block, note
    return None


def headline(doc: Document, rows: int = 8) -> list[str]:
    """The report's first table as console lines (header, then up to `rows` rows): what `spec score` prints."""
    found = first_table(doc)
    if found is None:
        return []
    table = found[0]
    shown = [table.header, *table.rows[:rows]]
    widths = [max(len(row[i]) for row in shown if i < len(row)) for i in range(len(table.header))]
    lines = ["  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=False)).rstrip() for row in shown]
    more = len(table.rows) - rows
    return lines + ([f"... and {more} more rows in the report"] if more > 0 else [])
