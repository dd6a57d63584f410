"""Tests of the cue-visibility family (families/cue/)."""

from __future__ import annotations

from pathlib import Path


def _tiny(folder: Path) -> Path:
    """test_cue_attributes.py's small spec, with one puzzle band (checking it takes a second, not a minute)."""
    from tests.families.cue.test_cue_attributes import _spec

    return _spec(folder, {"puzzled(identity, easy, intermediate, hard)": "puzzled(identity, easy)"})


# tests/families/test_accepts_table.py: (writes the family's example spec into a folder, the answer form it
# writes, the text around it with FORM marking the form)
ACCEPTS_EXAMPLE = (_tiny, "yesno", "could_be(person in A..D) FORM restating")
# the options form is what_if's (the scorer reads could_be's yes or no only: families/cue/check.py refuses other
# forms there), and the example writes it in that probe
ACCEPTS_PLACES = {'options "option1" | "option2"': 'what_if(person in A..D) options "option1" | "option2"'}
