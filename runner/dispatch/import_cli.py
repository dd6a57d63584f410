"""`spec import`: another harness's published files into a run or score folder, through the adapter of the
family whose runs they are (Family.importers), or a family-blind one for the peer tools' formats that hold any
exported suite (runner/peer_imports.py). This front door knows formats only by name."""

from __future__ import annotations

from pathlib import Path

import click

from spec_audits.base.terminal import echo
from spec_audits.contract.analysis_record import read_analysis
from spec_audits.dispatch import registry
from spec_audits.runner.peer_imports import PEER_FORMATS
from spec_audits.sdk.interface import Importer

PEER_IMPORTERS = {name: Importer(name, summary, convert) for name, summary, convert in PEER_FORMATS}


def _importers() -> dict[str, Importer]:
    found = {importer.name: importer for family in registry.all_families() for importer in family.importers}
    return found | {name: importer for name, importer in PEER_IMPORTERS.items()}


class _Formats(click.ParamType[Importer]):
    """FORMAT: one of the registered importers' names (listed in the error and in --help)."""

    name = "format"

    def convert(self, value: str, param: click.Parameter | None, ctx: click.Context | None) -> Importer:
        found = _importers()
        if value not in found:
            self.fail(f"unknown format {value!r}; known: {', '.join(sorted(found)) or 'none'}", param, ctx)
        return found[value]


class _ImportCommand(click.Command):
    def format_epilog(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """The formats, known only once the families are loaded."""
        with formatter.section("Formats"):
            formatter.write_dl([(name, importer.summary) for name, importer in sorted(_importers().items())])


@click.command("import", cls=_ImportCommand)
@click.argument("importer", metavar="FORMAT", type=_Formats())
@click.argument("files", nargs=-1, required=True, type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--suite", "suite", required=True, type=click.Path(exists=True, file_okay=False, path_type=Path),
              help="The compiled suite the lines are matched against (its rows must send the same prompts).")
@click.option("--out", required=True, type=click.Path(file_okay=False, path_type=Path),
              help="The run (or score) folder to write; it must not exist yet.")
@click.option("--skip-unmatched", is_flag=True,
              help="Leave out lines no suite row matches (counted in run.json's notes) instead of stopping.")
def import_cmd(importer: Importer, files: tuple[Path, ...], suite: Path, out: Path, skip_unmatched: bool) -> None:
    """Import another harness's published files into a run or score folder.

    Each line of FILE... (of FORMAT, listed below) is matched to a row of the compiled suite --suite, byte for
    byte (its prompt), and a sample; a line no row matches is an error naming file and line (--skip-unmatched
    leaves such lines out, counted in run.json's notes). Several models give a study folder, one run each.
    `spec score` then reads OUT like any run.

    \b
    Examples:
      spec compile specs/triage_probe_all.spec
      spec import choices-probe classified_v2_trolley_gpt-5-2-non-reasoning.jsonl.gz \\
          --suite generated/triage_probe_all --out runs/release-probe-triage
      spec import choices-conditions trolley_summary.csv --suite generated/triage_probe_all \\
          --out scores/release-triage
      spec score runs/release-probe-triage --parent scores/release-triage
      spec import inspect-log logs/2026-01-01T00-00-00_triage.eval --suite generated/triage --out runs/triage-inspect
      spec import promptfoo promptfoo-results.json --suite generated/triage --out runs/triage-promptfoo
    """
    family = next((family for family in registry.all_families() if importer in family.importers), None)
    if family is not None:
        read_analysis(suite, family.record_type())  # before the importer reads it: the manifest is a stranger's data
    elif skip_unmatched:
        raise click.UsageError(f"--skip-unmatched does not apply to {importer.name}: every answer to an exported "
                               "suite matches its row, and one that does not is an error")
    for line in importer.convert(list(files), out, {"suite": suite, "skip_unmatched": skip_unmatched}):
        echo(line)
