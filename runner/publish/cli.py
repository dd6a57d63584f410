"""The publish commands: `spec bundle`, `spec verify`, `spec export` and `spec diff`."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import click

from compiler.puzzles.verify import reprove_row
from runner.contract import ContractError, read_suite, read_suite_rows
from runner.publish.archive import is_archive, opened
from runner.publish.bundle import write_bundle
from runner.publish.diff import diff_lines
from runner.publish.export import EXPORTERS
from runner.publish.verify import SUMS_FILE, capped, check_recompile, check_sources, check_suite, check_sums


@click.command("bundle")
@click.argument("suite_dir", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("-o", "--out", required=True, type=click.Path(path_type=Path),
              help="NAME.tar.gz (or .tgz) for an archive; any other path is written as a folder.")
@click.option("--allow-unlicensed", is_flag=True,
              help="Bundle source files that no licence file covers; the bundle's licence is then 'other'.")
def bundle(suite_dir: Path, out: Path, allow_unlicensed: bool) -> None:
    """Bundle the compiled suite SUITE_DIR with its spec, sources, licences, dataset card and hashes.

    Run it from the folder the suite was compiled in (the manifest names the spec relative to it). The
    bundle holds suite.jsonl, manifest.json, schema.json, sources/ (the spec, every file it imports or
    reads, and their licence and attribution files), bundle.json, a dataset card README.md, croissant.json
    and SHA256SUMS. Its licence is the most restrictive of its sources'. The same suite gives a
    byte-identical archive. Refused when a source has no licence (unless --allow-unlicensed) or the spec no
    longer compiles to the suite.

    \b
    Example:
      spec bundle generated/triage -o triage.tar.gz
      spec verify triage.tar.gz
    """
    info = write_bundle(suite_dir, out, allow_unlicensed)
    click.echo(f"bundled {info['suite']} ({info['license']}, {len(info['sources'])} sources) -> {out}")


def _verify_folder(folder: Path, timeout_ms: int) -> tuple[list[str], Counter[str]]:
    if not (folder / SUMS_FILE).is_file():  # a compiled suite, not a bundle: read as every command reads it
        return check_suite(folder, timeout_ms)
    try:
        failures, counts = check_suite(folder, timeout_ms)
    except ContractError as err:  # in a bundle, one failure among the others
        failures, counts = [err.message], Counter()
    return [*check_sums(folder), *failures, *check_sources(folder), *check_recompile(folder)], counts


def _verify(target: Path, timeout_ms: int) -> tuple[list[str], Counter[str]]:
    if target.is_file() and not is_archive(target):  # a suite.jsonl alone: its puzzles
        rows = read_suite_rows(target)
        puzzles = [row for row in rows if row.puzzle]
        failures = [f"{target.name} (row {row.id}): puzzle: {problem}"
                    for row in puzzles for problem in reprove_row(row, timeout_ms)]
        return failures, Counter(rows=len(rows), puzzles=len(puzzles))
    if target.is_dir():
        return _verify_folder(target, timeout_ms)
    try:
        with opened(target) as folder:
            return _verify_folder(folder, timeout_ms)
    except ContractError as err:  # an archive that cannot be opened safely, or holds no suite
        return [err.message], Counter()


@click.command("verify")
@click.argument("target", metavar="BUNDLE_OR_DIR", type=click.Path(exists=True, path_type=Path))
@click.option("--timeout-ms", default=10_000, show_default=True, help="Z3 time limit per puzzle check.")
def verify(target: Path, timeout_ms: int) -> None:
    """Check a bundle (.tar.gz or folder) or a compiled suite; every failure named by file and row.

    A compiled suite: the manifest's hashes and counts against the files and rows, every row against
    schema.json, every puzzle re-proved with Z3 (exactly one solution, equal to the stored one; no clue
    gives the answer away alone; the difficulty band recomputes). A bundle adds SHA256SUMS (every member
    present with its hash, none unlisted), a checked extraction (no member outside the bundle folder), the
    sources (the files the bundled spec reads are those bundle.json lists, with their sha256) and a
    recompile of the bundled spec compared byte for byte with the suite. A suite.jsonl alone: its
    puzzles. Exits 1 on any failure.

    \b
    Example:
      spec verify triage.tar.gz
      spec verify generated/cue_visibility
    """
    failures, counts = _verify(target, timeout_ms)
    for failure in capped(failures):
        click.echo(f"FAIL {failure}", err=True)
    verdict = f"{len(failures)} failures" if failures else "all sound"
    click.echo(f"verified {target}: {counts['rows']} rows, {counts['puzzles']} puzzles: {verdict}")
    if failures:
        raise SystemExit(1)


@click.command("export")
@click.argument("suite_dir", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--to", "fmt", required=True, type=click.Choice(sorted(EXPORTERS)), help="The format to write.")
@click.option("-o", "--out", required=True, type=click.Path(path_type=Path),
              help="A file for inspect (.jsonl) and csv; a folder for promptfoo and hf.")
def export(suite_dir: Path, fmt: str, out: Path) -> None:
    """Export the compiled suite SUITE_DIR for inspect_ai, promptfoo, Hugging Face datasets or as CSV.

    \b
    inspect    JSONL for inspect_ai's json_dataset(): input messages, the valid answers as target,
               the cell, answers, samples and decode in metadata
    promptfoo  a folder with promptfooconfig.yaml, prompt.json and tests.yaml (one test per row)
    hf         a saved DatasetDict (one test split) with a card, for datasets.load_from_disk(OUT)
               and datasets.load_dataset(OUT); needs the datasets library
    csv        one line per row: id, samples, cell_<key> per cell key, the rest as JSON text

    \b
    Example:
      spec export generated/triage --to inspect -o triage.jsonl
    """
    suite = read_suite(suite_dir)
    out.parent.mkdir(parents=True, exist_ok=True)
    EXPORTERS[fmt](suite, out)
    click.echo(f"exported {len(suite.rows)} rows of {suite.manifest.suite} for {fmt} -> {out}")


@click.command("diff")
@click.argument("a", type=click.Path(exists=True, path_type=Path))
@click.argument("b", type=click.Path(exists=True, path_type=Path))
def diff(a: Path, b: Path) -> None:
    """Show what changed from suite A to suite B (compiled suites or bundles): rows and manifest fields.

    Rows are added, removed, or changed (an edited row gets a new id; it is paired with the old one by
    its cell, and the fields that differ are named). Manifest fields are compared by dotted path.

    \b
    Example:
      spec diff old/triage.tar.gz generated/triage
    """
    with opened(a) as first, opened(b) as second:
        lines = diff_lines(read_suite(first), read_suite(second))
    click.echo("\n".join(lines))
