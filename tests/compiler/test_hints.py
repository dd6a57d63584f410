"""A misspelling's hint: close_match is difflib's get_close_matches(n=1), which it imports only where a candidate's
length leaves it a chance (a clean spec never loads difflib: tests/compiler/test_lazy_families.py)."""

from __future__ import annotations

import difflib
import itertools

import pytest

from spec_audits.compiler.errors import close_match, did_you_mean

WORDS = ("", "a", "A", "ab", "abc", "seed", "sed", "suite", "suit", "templat", "template", "abcdefg", "xyz",
         "influence", "influense", "conversation", "desing", "generatr")
CANDIDATES = (("suite", "version", "seed", "description", "citation", "import", "factor", "system", "template",
               "influence", "data", "conversation", "followup", "puzzle", "generator", "design"),
              ("abcdefg",), ("abc",), ("",), (), ("ab", "abc", "abcd"))


@pytest.mark.parametrize("cutoff", [0.0, 0.5, 0.6, 0.75, 1.0])
def test_close_match_is_difflibs_closest(cutoff: float) -> None:
    for word, candidates in itertools.product(WORDS, CANDIDATES):
        expected = difflib.get_close_matches(word, candidates, n=1, cutoff=cutoff)
        assert close_match(word, candidates, cutoff) == (expected[0] if expected else None), (word, candidates)


def test_a_length_exactly_at_the_cutoff_still_matches() -> None:
    """'abc' and 'abcdefg' share 3 of 10 characters: ratio 0.6, which passes difflib's cutoff of 0.6."""
    assert close_match("abc", ["abcdefg"], 0.6) == "abcdefg"
    assert close_match("ab", ["abcdefg"], 0.6) is None


def test_did_you_mean_names_the_closest_or_lists_the_names() -> None:
    assert did_you_mean("colr", ["color", "size"]) == "did you mean 'color'?"
    assert did_you_mean("q", ["color", "size"]) == "valid names: 'color', 'size'"
    many = [*(f"{word}{i}" for word in ("alpha", "beta") for i in range(30)), "gamma"]  # over MAX_SCORED
    assert did_you_mean("gamme", many) == "did you mean 'gamma'?"
    assert did_you_mean("q", many) is None
