"""`python -m spec_audits.cli ARGS` runs `spec ARGS`."""

from spec_audits.cli import run

run(prog_name="spec")
