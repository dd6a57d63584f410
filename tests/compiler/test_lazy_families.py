"""Issue 33 item 3: a spec is parsed with the clauses of only the families its designs name, so `spec check`
imports no other family (nor Z3, which only specs with puzzles need); the names are read from the text
without parsing, and a guess that misses falls back to every family's clauses."""

from __future__ import annotations

import subprocess
import sys

from spec_audits.compiler.parse import DEFAULT_ANALYSIS, declared_analyses
from tests.support import ROOT

LOADED = """
import sys
from spec_audits.cli import main
try:
    main(["check", "specs/triage.spec"])
except SystemExit as done:
    assert done.code in (0, None), done.code
print(" ".join(sorted(m for m in sys.modules if m.startswith(("spec_audits.families.", "z3")))))
print(" ".join(sorted(sys.modules)))
"""


def test_checking_a_spec_imports_only_the_family_it_names() -> None:
    ran = subprocess.run([sys.executable, "-c", LOADED], cwd=ROOT, capture_output=True, text=True, check=True)
    loaded = ran.stdout.split("\n")[-3].split()
    families = {name.split(".")[2] for name in loaded if name.startswith("spec_audits.families.")}
    assert families == {"influence"}, loaded
    assert not [name for name in loaded if name.startswith("z3")]


def test_checking_a_spec_builds_no_row_model_and_reads_no_table() -> None:
    """`spec check` needs the suite contract's names and domains (spec_audits.contract.suite_terms), never the
    row and manifest models, the suite reader, numpy or pandas, which it once imported, nor pydantic (the decode
    domains are checked without it, the analysis records imported where a suite is read) or the installed
    distributions' metadata (spec_audits/dispatch/registry.py: triage.spec names a built-in family)."""
    ran = subprocess.run([sys.executable, "-c", LOADED], cwd=ROOT, capture_output=True, text=True, check=True)
    loaded = set(ran.stdout.split("\n")[-2].split())
    assert {"spec_audits.contract.suite_terms", "spec_audits.compiler.dispatch.build"} <= loaded  # it did check
    never = {"spec_audits.contract.suite_model", "spec_audits.contract.reader", "spec_audits.contract.results_model",
             "numpy", "pandas", "scipy", "pydantic", "spec_audits.contract.analysis_record", "importlib.metadata"}
    assert loaded & never == set()


def test_the_names_a_text_declares_are_read_without_parsing() -> None:
    text = '''design a:
  prompt q
  analysis effects
# analysis cue_visibility (a comment)
template t """analysis puzzle_solving in a string"""
design b:
  prompt q
generator g:
  analysis bias_decomposition
'''
    assert declared_analyses(text) == {"effects", DEFAULT_ANALYSIS, "bias_decomposition"}
    assert declared_analyses('suite s "S"\nseed 1\n') == frozenset()


def test_checking_a_clean_spec_imports_nothing_only_a_compile_or_a_mistake_needs() -> None:
    """Issue 33: what a check of triage.spec (no mistake, one size-pair design, no data file, no conversation)
    never uses is imported where it is used: the writing stages, the hints' difflib (a misspelling's hint loads it),
    the CSV reader, conversations, and the influence family's designs over data items and its `trials N per cell`."""
    ran = subprocess.run([sys.executable, "-c", LOADED], cwd=ROOT, capture_output=True, text=True, check=True)
    loaded = set(ran.stdout.split("\n")[-2].split())
    assert {"spec_audits.compiler.dispatch.build", "spec_audits.families.influence.prepare"} <= loaded  # it did check
    never = {"difflib", "heapq", "csv", "spec_audits.compiler.emit", "spec_audits.compiler.version",
             "spec_audits.compiler.conversations", "spec_audits.families.influence.items",
             "spec_audits.families.influence.examples", "spec_audits.families.influence.trials"}
    assert loaded & never == set()
