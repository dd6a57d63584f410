"""Issue 33 item 4: a family's rows may read fields of the reply besides the answer (a stated confidence).
The contract validates the readers with the row; the runner reads each by its label, never by a pattern
from the suite, and records the value, or null where the reply gives none of its kind and bounds."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from spec_audits.contract.results_model import ResultRow
from spec_audits.contract.suite_model import Reader
from spec_audits.contract.writer import suite_row
from spec_audits.runner.answers import read_fields

CONFIDENCE = Reader(name="confidence", after="Confidence:", kind="int", low=0, high=100)
ROW: dict[str, Any] = {"messages": [{"role": "user", "content": "A or B?"}], "samples": 1, "cell": {},
                       "answers": {"A": "a", "B": "b"}, "decode": {}}


@pytest.mark.parametrize(("reply", "value"), [
    ("A\nConfidence: 80", 80),
    ("A. confidence: **95**", 95),  # case and markdown emphasis ignored
    ("Confidence: 10. On reflection, Confidence: 20", 20),  # the last statement counts
    ("Confidence: 180", None),  # out of bounds: null, never clipped
    ("Confidence: 85.5", None),  # not a whole number
    ("Confidence: high", None),
    ("A", None),
    (None, None),
])
def test_a_stated_confidence_is_read_by_its_label(reply: str | None, value: int | None) -> None:
    assert read_fields(reply, [CONFIDENCE]) == {"confidence": value}


def test_numbers_and_words_are_read_by_their_kind() -> None:
    readers = [Reader(name="share", after="share", kind="number", low=0, high=1),
               Reader(name="label", after="Label:", kind="word")]
    assert read_fields("Share 0.25, Label: left-handed.", readers) == {"share": 0.25, "label": "left-handed"}


@pytest.mark.parametrize(("reader", "problem"), [
    ({"name": "Confidence", "after": "x", "kind": "int"}, "String should match pattern"),
    ({"name": "c", "after": " ", "kind": "int"}, "String should match pattern"),
    ({"name": "c", "after": "x", "kind": "regex"}, "Input should be 'int', 'number' or 'word'"),
    ({"name": "c", "after": "x", "kind": "word", "low": 0}, "a word has no bounds"),
    ({"name": "c", "after": "x", "kind": "int", "low": 5, "high": 1}, "low 5.0 is above high 1.0"),
    ({"name": "c", "after": "x", "kind": "int", "pattern": "(a+)+$"}, "Extra inputs are not permitted"),
])
def test_the_contract_refuses_a_reader_out_of_its_domain(reader: dict[str, Any], problem: str) -> None:
    with pytest.raises(ValidationError, match=problem):
        suite_row({**ROW, "read": [reader]})


def test_two_readers_of_one_name_are_refused_and_values_are_typed() -> None:
    with pytest.raises(ValidationError, match="two readers of one name: c, c"):
        suite_row({**ROW, "read": [{"name": "c", "after": "x", "kind": "int"}] * 2})
    row = suite_row({**ROW, "read": [CONFIDENCE.model_dump(exclude_none=True)]})
    assert row.read == [CONFIDENCE]
    with pytest.raises(ValidationError, match="recorded.confidence"):
        ResultRow(item_id=row.id, sample=0, model="m", params={}, recorded={"confidence": [80]})
