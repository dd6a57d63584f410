"""The publish commands: `spec bundle`, `spec verify`, `spec export` and `spec diff`."""

from __future__ import annotations

import stat
from collections import Counter
from pathlib import Path

import click

from spec_audits.base.terminal import visible
from spec_audits.contract.reader import ContractError, read_suite, read_suite_rows
from spec_audits.contract.writer import content_id
from spec_audits.puzzles.verify import reprove_row
from spec_audits.runner.commands.publish.archive import is_archive, opened, removed_on_termination
from spec_audits.runner.commands.publish.bundle import write_bundle
from spec_audits.runner.commands.publish.diff import by_content, diff_lines
from spec_audits.runner.commands.publish.export import EXPORTERS, FORMATS, to_promptfoo
from spec_audits.runner.commands.publish.members import DEFAULT_CAPS, Caps, Members, scan
from spec_audits.runner.commands.publish.recompile import Diagnostics
from spec_audits.runner.commands.publish.sums import SUMS_FILE
from spec_audits.runner.commands.publish.verify import Options, capped, check_bundle, check_suite


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
    click.echo(f"bundled {visible(info['suite'])} ({info['license']}, {len(info['sources'])} sources) -> {out}")


def _verify_rows(target: Path, options: Options) -> tuple[list[str], Counter[str]]:
    """A suite.jsonl alone: its ids and its puzzles."""
    if not stat.S_ISREG(target.stat().st_mode):
        raise ContractError(target, "is not a plain file", fix="give a bundle, a suite folder or a suite.jsonl")
    rows = read_suite_rows(target)
    puzzles = [row for row in rows if row.puzzle]
    failures = [f"{target.name} (row {row.id}): id does not match the row's content, which hashes to {fresh}"
                for row in rows if (fresh := content_id(row)) != row.id]
    failures += [f"{target.name} (row {row.id}): puzzle: {problem}"
                 for row in puzzles for problem in reprove_row(row, options.rlimit)]
    return failures, Counter(rows=len(rows), puzzles=len(puzzles))


def _verify_folder(members: Members, options: Options) -> tuple[list[str], Counter[str]]:
    if SUMS_FILE not in members.sizes:  # a compiled suite, not a bundle: read as every command reads it
        failures, counts, _ = check_suite(members, options)
        return failures, counts
    return check_bundle(members, options)


def _verify(target: Path, options: Options) -> tuple[list[str], Counter[str]]:
    if target.is_file() and not is_archive(target):
        return _verify_rows(target, options)
    if not (target.is_dir() or is_archive(target)):
        raise ContractError(target, "is not a file or folder", fix="give a bundle, a suite folder or a suite.jsonl")
    try:
        members = scan(target, options.caps) if target.is_dir() else None
    except ContractError as err:  # a folder holding a link, a FIFO, an odd name, or too much
        return [err.message], Counter()
    if members is not None:
        return _verify_folder(members, options)
    try:
        options.say(f"reading {target}")
        with opened(target, options.caps) as members:
            return _verify_folder(members, options)
    except ContractError as err:  # an archive that cannot be opened safely, or holds no suite
        return [err.message], Counter()


def _failure_lines(failure: str) -> str:
    """A failure as one line, control characters visible; the compiler's diagnostics that end a failure follow
    it indented, so that no line of theirs can pass for a line of ours (a verdict)."""
    if isinstance(failure, Diagnostics):
        return visible(failure, keep_newlines=True).replace("\n", "\n    ")
    return visible(failure)


@click.command("verify")
@click.argument("target", metavar="BUNDLE_OR_DIR", type=click.Path(exists=True, path_type=Path))
@click.option("--rlimit", type=click.IntRange(min=1), default=None,
              help="Z3 steps per puzzle check (rlimit: a count of work, not time, so a verdict never depends on "
                   "load); default: the compiler's limit, docs/puzzles.md.")
@click.option("--max-seconds", default=300.0, show_default=True, type=click.FloatRange(min=0, min_open=True),
              help="Time budget of the bundled spec's recompile (wall clock, and CPU).")
@click.option("--max-memory", default=2048, show_default=True, type=click.IntRange(min=1),
              help="Memory budget of the recompile, in MiB.")
@click.option("--max-bytes", default=DEFAULT_CAPS.bytes, show_default=True, type=click.IntRange(min=1),
              help="Most bytes a bundle may hold (an archive's, inflated).")
@click.option("--max-files", default=DEFAULT_CAPS.files, show_default=True, type=click.IntRange(min=1),
              help="Most files and folders a bundle may hold.")
@click.option("-q", "--quiet", is_flag=True, help="No progress on stderr.")
def verify(target: Path, rlimit: int | None, max_seconds: float, max_memory: int, max_bytes: int, max_files: int,
           quiet: bool) -> None:
    """Check a bundle (.tar.gz or folder) or a compiled suite; every failure named by file and row.

    A compiled suite: the manifest's hashes and counts against the files and rows, every row against
    spec's own row schema (the suite's schema.json must equal it), every row's id against its content,
    every puzzle re-proved with Z3 (exactly one solution, equal to the stored one; no clue gives the
    answer away alone; the difficulty band recomputes). A bundle adds SHA256SUMS (every member present
    with its size and hash, none unlisted), a checked extraction (plain files under the one top folder,
    no links, duplicates or sparse files, within --max-files and --max-bytes, none larger than
    SHA256SUMS lists), a recompile of the bundled spec in a child process (no network, none of your
    environment, at most --max-seconds and --max-memory) compared byte for byte with the suite, and the
    provenance recomputed (the files the spec reads are those bundle.json lists with their sha256;
    each licence is its licence file's; the card and croissant.json are the ones the suite and its
    sources give). Nothing outside the bundle is read. A suite.jsonl alone: its ids and puzzles.
    Progress goes to stderr. Exits 1 on any failure.

    \b
    Example:
      spec verify triage.tar.gz
      spec verify generated/cue_visibility --quiet
    """
    say = (lambda line: None) if quiet else (lambda line: click.echo(f"verify: {visible(line)}", err=True))
    options = Options(rlimit, max_seconds, max_memory, Caps(max_files, max_bytes), say, not quiet)
    with removed_on_termination():
        failures, counts = _verify(target, options)
    for failure in capped(failures):
        click.echo(f"FAIL {_failure_lines(failure)}", err=True)
    verdict = f"{len(failures)} failures" if failures else "all sound"
    click.echo(f"verified {visible(str(target))}: {counts['rows']} rows, {counts['puzzles']} puzzles: {verdict}")
    if failures:
        raise SystemExit(1)


@click.command("export")
@click.argument("suite_dir", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--to", "fmt", required=True, type=click.Choice(FORMATS), help="The format to write.")
@click.option("-o", "--out", required=True, type=click.Path(path_type=Path),
              help="A file for inspect (.jsonl) and csv; a folder for promptfoo and hf.")
@click.option("--provider", metavar="ID",
              help="promptfoo only, and required there: the provider the config names, e.g. openai:chat:gpt-4o-mini.")
def export(suite_dir: Path, fmt: str, out: Path, provider: str | None) -> None:
    """Export the compiled suite SUITE_DIR for inspect_ai, promptfoo, Hugging Face datasets or as CSV.

    \b
    inspect    JSONL for inspect_ai's json_dataset() (input messages; the cell, answers, samples and
               decode in metadata) and beside it OUT.py, the task `inspect eval OUT.py` runs as it is
    promptfoo  a folder with promptfooconfig.yaml (--provider with the suite's decode settings),
               prompt.json, tests.yaml (one test per row) and assert_answer.py (spec's answer parser)
    hf         a saved DatasetDict (one test split) with a card, for datasets.load_from_disk(OUT)
               and datasets.load_dataset(OUT); needs the datasets library
    csv        one line per row: id, samples, cell_<key> per cell key, the rest as JSON text

    \b
    Example:
      spec export generated/triage --to inspect -o triage.jsonl
      inspect eval triage.py --model openai/gpt-4o-mini
      spec export generated/triage --to promptfoo --provider openai:chat:gpt-4o-mini -o triage-promptfoo
    """
    if (provider is None) == (fmt == "promptfoo"):
        raise click.UsageError("--provider ID goes with --to promptfoo, and only there (e.g. --provider "
                               "openai:chat:gpt-4o-mini)")
    suite = read_suite(suite_dir)
    out.parent.mkdir(parents=True, exist_ok=True)
    if provider is None:
        EXPORTERS[fmt](suite, out)
    else:
        to_promptfoo(suite, out, provider)
    click.echo(f"exported {len(suite.rows)} rows of {visible(suite.manifest.suite)} for {fmt} -> {out}")


@click.command("diff")
@click.argument("a", type=click.Path(exists=True, path_type=Path))
@click.argument("b", type=click.Path(exists=True, path_type=Path))
def diff(a: Path, b: Path) -> None:
    """Show what changed from suite A to suite B (compiled suites or bundles): rows and manifest fields.

    Rows are added, removed, or changed (an edited row gets a new id; it is paired with the old one by
    its cell, and the fields that differ are named). Ids are recomputed from each row's content: a row
    whose written id does not match is named on stderr and compared by its content. Manifest fields are
    compared by dotted path. Archives are opened as `spec verify` opens them.

    \b
    Example:
      spec diff old/triage.tar.gz generated/triage
    """
    with removed_on_termination(), opened(a) as first, opened(b) as second:
        (old, named_a), (new, named_b) = by_content(read_suite(first.root)), by_content(read_suite(second.root))
    for line in [*named_a, *named_b]:
        click.echo(f"warning: {visible(line)}", err=True)
    click.echo("\n".join(map(visible, diff_lines(old, new))))
