"""spec: a declarative compiler and runner for LLM influence and bias audits.

One import name for the whole distribution (spec-audits). The folders compiler/, runner/ and families/
install under it (spec_audits.compiler, spec_audits.runner, spec_audits.families); docs/architecture.md
lists the packages, their layers and what each module does. Importing this package imports nothing else:
every module of spec imports it first, and `spec --help` must stay fast.
"""

__version__ = "0.1.0"
