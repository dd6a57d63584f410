"""`spec score RUN --turn NAME` for every family: each run's answers of answered turn NAME put in place of the
rows' own, as a run folder of its own (run.json naming the same suite, results.jsonl moved by
runner/turn_flips.py's at_turn), which the family then scores like any run: its effects on that turn."""

from __future__ import annotations

from pathlib import Path

from spec_audits.contract.reader import RESULTS_FILE, read_run, suite_dir_of
from spec_audits.contract.suite_model import SuiteRow
from spec_audits.runner.results_io import write_results, write_run_info
from spec_audits.runner.score_input import ScoreInputError, scored_results
from spec_audits.runner.turn_flips import FINAL, FlipInputError, at_turn


def _own_form(row: SuiteRow, name: str) -> str | None:
    """Why turn `name` of `row` cannot stand in for the row's answer (its own answer form), or None."""
    turn = next((m.answer for m in row.messages if m.answer is not None and m.answer.name == name), None)
    if name == FINAL or turn is None or (turn.answers == row.answers and turn.meanings == row.meanings):
        return None
    return (f"row {row.id}: turn '{name}' answers in its own form ({' | '.join(turn.answers)}), not the design's "
            f"({' | '.join(row.answers)}); --turn scores a turn answered in the design's form")


def moved_run(run: Path, name: str, dest: Path) -> Path:
    """A run folder at `dest` whose answers are turn `name`'s; a located error where a row cannot give them."""
    info, suite = read_run(run)
    results = run / RESULTS_FILE
    problem = next((why for row in suite.rows if (why := _own_form(row, name)) is not None), None)
    if problem is not None:
        raise ScoreInputError(results, f"--turn {name}: {problem}")
    try:
        moved = at_turn(scored_results(results), suite.rows, name)
    except FlipInputError as err:
        raise ScoreInputError(results, f"--turn {name}: {err}") from None
    dest.mkdir(parents=True, exist_ok=True)
    write_results(dest / RESULTS_FILE, moved)
    write_run_info(dest, info.model_copy(update={"suite_dir": str(suite_dir_of(run, info).resolve())}))
    return dest


def moved_runs(runs: list[Path], name: str, out: Path) -> list[Path]:
    """Every run moved to turn `name`, under OUT/turn-NAME/ (kept beside the scores they give)."""
    return [moved_run(run, name, out / f"turn-{name}" / f"{index}-{run.name}") for index, run in enumerate(runs)]
