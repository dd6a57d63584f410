"""Tests of the influence family (families/influence/)."""

from tests.support import shipped_spec

# tests/families/test_accepts_table.py: (writes the family's example spec into a folder, the answer form it
# writes, the text around it with FORM marking the form)
ACCEPTS_EXAMPLE = (shipped_spec("triage.spec"), 'choice "A" | "B"', "  answer FORM\n")
