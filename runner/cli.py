"""The `spec` command line: one click group; each stage registers its commands here."""

from __future__ import annotations

import click

from compiler.cli import check, compile_cmd, show
from compiler.verify_cli import verify
from runner.doctor import doctor
from runner.generate_cli import generate
from runner.run_cli import merge, run
from runner.score_cli import report, score


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="spec-audits", prog_name="spec")
def main() -> None:
    """spec: compile, run and score LLM influence and bias audits.

    \b
    Typical session:
      spec check specs/triage.spec
      spec compile specs/triage.spec -o generated/triage
      spec show generated/triage
      spec run generated/triage --limit 200 --out runs/triage-local
      spec score runs/triage-local
    """


main.add_command(check)
main.add_command(compile_cmd)
main.add_command(show)
main.add_command(verify)
main.add_command(score)
main.add_command(report)
main.add_command(run)
main.add_command(merge)
main.add_command(doctor)
main.add_command(generate)
