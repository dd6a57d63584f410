"""Tests of the conditional cognitive-bias family (families/cognitive_bias/)."""

from tests.support import shipped_spec

# tests/families/test_accepts_table.py: (writes the family's example spec into a folder, the answer form it
# writes, the text around it with FORM marking the form)
ACCEPTS_EXAMPLE = (shipped_spec("cognitive_bias.spec"), "numbered arm.options", "  answer FORM\n")
