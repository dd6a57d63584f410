"""Where spec_audits/local/evaluator.py cuts a sequence and how much of a held KV cache it reuses, and the
runner's order for local models (no model needed)."""

from __future__ import annotations

from spec_audits.contract.suite_model import SuiteRow
from spec_audits.local.evaluator import MAX_CHUNK, MIN_CHUNK, chunk_ends, reusable
from spec_audits.runner.plan import WorkItem, prefix_order
from tests.support import suite_row

BREAK = 108


def test_a_paragraph_break_cuts_once_the_chunk_is_long_enough_then_every_extra_token() -> None:
    prompt = [5] * 10 + [BREAK] + [5] * 20 + [BREAK] + [5] * 9  # breaks at index 10 (too soon) and 31
    assert MIN_CHUNK == 24
    assert chunk_ends(prompt, frozenset({BREAK})) == [32, 41]
    assert chunk_ends(prompt, frozenset({BREAK}), extra=2) == [32, 41, 42, 43]
    assert chunk_ends(prompt, frozenset()) == [41]


def test_a_long_run_without_breaks_is_cut_every_max_chunk_tokens_and_a_final_break_is_no_cut() -> None:
    assert chunk_ends([7] * (2 * MAX_CHUNK + 5), frozenset()) == [MAX_CHUNK, 2 * MAX_CHUNK, 2 * MAX_CHUNK + 5]
    assert chunk_ends([7] * 30 + [BREAK], frozenset({BREAK})) == [31]


def test_reuse_stops_at_the_last_shared_cut_within_the_shared_tokens() -> None:
    held = list(range(50))
    assert reusable(held, [20, 50], list(range(40)) + [99] * 10, [20, 50]) == 20
    assert reusable(held, [20, 50], held, [20, 50]) == 20  # the last chunk is decoded again for its logits
    assert reusable(held, [20, 50], held + [1], [20, 50, 51]) == 50
    assert reusable(held, [20, 50], held, [25, 50]) == 0  # cut elsewhere: nothing is reused
    assert reusable(held, [20, 50], [9] + held[1:], [20, 50]) == 0
    assert reusable([], [], held, [20, 50]) == 0


def _row(text: str) -> SuiteRow:
    body = {"messages": [{"role": "user", "content": text}], "samples": 2, "answers": {"A": "a", "B": "b"}}
    return suite_row({**body, "cell": {}, "decode": {}})


def test_prefix_order_puts_rows_that_share_a_beginning_next_to_each_other_samples_in_order() -> None:
    rows = [_row("Option A: 2 people"), _row("Question\n\nB"), _row("Option A: 10 people"), _row("Question\n\nA")]
    items = [WorkItem(row, sample) for sample in (1, 0) for row in rows]
    ordered = [(work.row.messages[0].content, work.sample) for work in prefix_order(items)]
    assert ordered == [
        ("Option A: 10 people", 0), ("Option A: 10 people", 1), ("Option A: 2 people", 0), ("Option A: 2 people", 1),
        ("Question\n\nA", 0), ("Question\n\nA", 1), ("Question\n\nB", 0), ("Question\n\nB", 1),
    ]
