"""Hostile specs that used to hang end within a few seconds, with their located error (the exact
messages are in each fixture's header, checked by test_malformed_specs.py)."""

from __future__ import annotations

import time

import pytest

from tests.compiler.test_malformed_specs import MALFORMED, expected, reported, run_check

BOUNDED = ("sandbox_huge_power", "sandbox_nested_huge_ranges", "sandbox_string_repetition",
           "sandbox_render_time_limit")
SECONDS = 5.0


@pytest.mark.parametrize("name", BOUNDED)
def test_bounded_case_ends_quickly(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    start = time.monotonic()
    result = run_check(f"{name}.spec", monkeypatch)
    assert time.monotonic() - start < SECONDS
    assert reported(result.output) == expected(MALFORMED / f"{name}.spec")
