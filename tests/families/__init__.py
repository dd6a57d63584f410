"""Tests of the design families. `with_form` writes an answer form into a family's example spec (its
ACCEPTS_EXAMPLE), as tests/families/test_accepts_table.py and the composition matrix do."""

from __future__ import annotations

import importlib

from spec_audits.dispatch import registry


def with_form(family: str, text: str, form: str) -> str:
    """`text` (the family's example spec) with answer `form` written where ACCEPTS_EXAMPLE marks FORM, or, for
    a form the family's ACCEPTS_PLACES gives its own clause (a cue probe reads one form only), unchanged once
    that clause is found in it: the example already writes the form there."""
    package = importlib.import_module("tests.families." + registry.BUILTIN[family].rpartition(".")[2])
    _, shipped, around = package.ACCEPTS_EXAMPLE
    place = getattr(package, "ACCEPTS_PLACES", {}).get(form)
    if place is not None:
        assert text.count(place) == 1, place
        return text
    assert text.count(around.replace("FORM", shipped)) == 1, around
    return str(text.replace(around.replace("FORM", shipped), around.replace("FORM", form), 1))
