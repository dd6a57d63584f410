"""Progress off a terminal gives an ETA at the rate so far (issue 36: a run logged to a file said how far it
was, never how long it had left)."""

from __future__ import annotations

import io

import pytest

from spec_audits.runner import progress as progress_module
from spec_audits.runner.progress import LineProgress, eta


def test_eta_is_the_time_left_at_the_rate_so_far() -> None:
    assert eta(10.0, 5, 15) == ", ETA 30 s"
    assert eta(60.0, 10, 90) == ", ETA 9 min"
    assert eta(3600.0, 10, 50) == ", ETA 5.0 h"
    assert eta(10.0, 0, 15) == "" and eta(10.0, 15, 0) == ""  # no rate yet; nothing left


def test_log_lines_carry_the_eta_counting_only_this_runs_answers(monkeypatch: pytest.MonkeyPatch) -> None:
    clock = iter(float(t) for t in range(0, 1000, 2))  # each look at the clock is 2 s later
    monkeypatch.setattr(progress_module.time, "monotonic", lambda: next(clock))
    out = io.StringIO()
    bar = LineProgress(total=100, initial=50, unit="answers", file=out)  # half resumed from an earlier run
    for _ in range(50):
        bar.update()
    lines = out.getvalue().splitlines()
    assert lines[0] == "51/100 answers (51%), 2 s, ETA 98 s"  # 1 answer in 2 s, 49 left
    assert lines[1] == "60/100 answers (60%), 4 s, ETA 16 s"  # 10 answers in 4 s, 40 left
    assert lines[-1] == "100/100 answers (100%), 12 s"
