"""`python -m spec_audits.cli ARGS` runs `spec ARGS`."""

from spec_audits.cli import main

main(prog_name="spec")
