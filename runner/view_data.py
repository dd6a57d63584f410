"""What `spec view` shows, family-blind: every answer of one or several runs with its cell and its transcript.

A transcript is rebuilt from the suite row and the results line as the runner played it: fixed turns as
written (user turns marked `fill` filled in from the answered turns, as runner/conversation.py does),
generated turns and the answer as received, then the extraction call, the follow-ups and the judges' replies.
Nothing here is parsed as markup: the page (runner/view_page.py) sets every text as text.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from spec_audits.contract.reader import RESULTS_FILE, RUN_FILE, ContractError, read_run
from spec_audits.contract.results_model import ResultRow
from spec_audits.contract.suite_model import EXTRACTION_SLOT, SuiteRow
from spec_audits.contract.suite_terms import EMBEDDED_JUDGE, FOLLOWUP_SLOTS
from spec_audits.runner.conversation import ConversationStopped, fill_turn
from spec_audits.runner.files_out import write_text
from spec_audits.runner.item_runner import fill_slots
from spec_audits.runner.report.document import Table
from spec_audits.runner.score_input import scored_results
from spec_audits.runner.study import expand_runs, is_study
from spec_audits.runner.view_page import render_page

Turn = dict[str, str]
PAGE = "view.html"


def run_folders(folder: Path) -> tuple[list[Path], Path]:
    """The runs behind `folder` (a run, a study, or the score/ folder `spec score` wrote inside either) and
    the folder the page goes to: beside report.html when the score folder exists, else the folder itself."""
    if (folder / "summary.json").is_file() and not (folder / "run.json").is_file() and not is_study(folder):
        runs_at, out = folder.parent, folder
    else:
        runs_at = folder
        out = folder / "score" if (folder / "score" / "summary.json").is_file() else folder
    if not (runs_at / "run.json").is_file() and not is_study(runs_at):
        raise ContractError(folder, "is neither a run folder (run.json), a study (study.json) nor the score/ "
                            "folder inside one", fix="give the folder `spec run` wrote, e.g. runs/NAME")
    return expand_runs((runs_at,)), out


def _filled(row: SuiteRow, result: ResultRow) -> list[Turn]:
    """The turns before the answer, as sent: generated ones from results' `turns`, fill turns filled in."""
    generated = {int(turn["turn"]): str(turn.get("content") or "") for turn in result.turns or []}
    answered_by_turn = {int(t["turn"]): (name, t) for name, t in (result.turn_answers or {}).items()}
    specs = {m.answer.name: m.answer for m in row.messages if m.answer is not None}
    answered: dict[str, Any] = {}
    turns: list[Turn] = []
    messages = row.messages[:-1] if row.messages[-1].generate else row.messages
    for index, message in enumerate(messages):
        if message.generate:
            if index not in generated:
                break  # the conversation stopped before this turn
            turns.append(_generated(index, generated[index], answered_by_turn, row, message.model))
            if index in answered_by_turn:
                name, turn = answered_by_turn[index]
                answered[name] = (specs[name], turn)
            continue
        text = message.content or ""
        if message.fill:
            try:
                text = fill_turn(text, answered, index)
            except ConversationStopped:
                break
        turns.append({"role": message.role, "text": text})
    return turns


def _generated(index: int, text: str, answered: dict[int, tuple[str, dict[str, Any]]], row: SuiteRow,
               model: str | None) -> Turn:
    turn = {"role": "assistant", "text": text}
    if model is not None:
        turn["note"] = f"written by {model}"
    if index in answered:
        name, parsed = answered[index]
        meaning = parsed.get("outcome")
        turn["note"] = (f"answered turn '{name}': parsed {parsed.get('answer')!r}"
                        + (f" = {meaning}" if meaning is not None else " (no valid answer)"))
    return turn


def transcript(row: SuiteRow, result: ResultRow) -> list[Turn]:
    """Every turn as sent and received, then the extraction call, the follow-ups and the judges' replies."""
    turns = _filled(row, result)
    if result.response is None and result.error is None and result.stopped is None:
        return turns
    if result.stopped is not None:
        return [*turns, {"role": "note", "text": f"conversation stopped: {result.stopped}"}]
    if result.error is not None and result.response is None:
        return [*turns, {"role": "note", "text": f"failed: {result.error}"}]
    turns.append({"role": "assistant", "text": result.response or "", "note": "the answer"})
    if row.extract is not None:
        prompt = row.extract.prompt.replace(EXTRACTION_SLOT, result.response or "", 1)
        turns.append({"role": "extraction", "text": prompt, "note": "extraction prompt"})
        turns.append({"role": "extraction", "text": result.extraction or "", "note": "extraction reply"})
    turns.extend(_followups(row, result))
    return turns


def _followups(row: SuiteRow, result: ResultRow) -> list[Turn]:
    filled = dict(zip(FOLLOWUP_SLOTS, (result.answer or result.response or "",), strict=True))
    turns: list[Turn] = []
    for followup in row.followups or []:
        reply = (result.followups or {}).get(followup.name)
        if not isinstance(reply, dict):
            continue
        turns.append({"role": "user", "text": fill_slots(followup.content, filled),
                      "note": f"follow-up {followup.name}"})
        turns.append({"role": "assistant", "text": str(reply.get("response") or "")})
        if "judge_response" in reply:
            turns.append({"role": "judge", "text": str(reply.get("judge_response") or ""),
                          "note": f"judge label: {reply.get('label')}"
                          + (f"; reason: {reply['reason']}" if reply.get("reason") else "")})
    return turns


def _record(run: str, row: SuiteRow, result: ResultRow) -> dict[str, Any]:
    return {"run": run, "model": result.model, "item": result.item_id, "sample": result.sample,
            "cell": {key: "" if value is None else str(value) for key, value in row.cell.items()},
            "answer": result.answer, "outcome": result.outcome, "parsed": result.answer is not None,
            "cached": result.cached, "error": result.error, "answers": row.answers,
            "turn_answers": {name: turn.get("answer") for name, turn in (result.turn_answers or {}).items()},
            "transcript": transcript(row, result)}


def run_records(run_dir: Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """A run's description (suite, model, mode, embedded or not) and one record per (item, sample)."""
    info, suite = read_run(run_dir)
    rows = {row.id: row for row in suite.rows}
    results = sorted(scored_results(run_dir / RESULTS_FILE), key=lambda result: (result.item_id, result.sample))
    name = run_dir.name
    records = [_record(name, rows[result.item_id], result) for result in results if result.item_id in rows]
    about = {"run": name, "model": info.model, "mode": info.mode, "embedded": info.model == EMBEDDED_JUDGE,
             "suite": suite.manifest.title or suite.manifest.suite, "planned": info.planned}
    return about, records


Headline = tuple[Table, str]
"""The report's first table and its "how to read this" line (runner/report/cold.py, first_table)."""


def view_data(folder: Path, headline: Headline | None = None) -> tuple[dict[str, Any], Path]:
    """Everything the page shows (`headline`, the score's, when it is scored), and the folder it goes to."""
    runs, out = run_folders(folder)
    abouts, records = [], []
    for run in runs:
        about, found = run_records(run)
        abouts.append(about)
        records.extend(found)
    factors: dict[str, list[str]] = {}
    for record in records:
        for key, value in record["cell"].items():
            factors.setdefault(key, [])
            if value not in factors[key]:
                factors[key].append(value)
    title = abouts[0]["suite"] if abouts else folder.name
    return {"title": title, "runs": abouts, "factors": {k: sorted(v) for k, v in sorted(factors.items())},
            "headline": None if headline is None else {"header": headline[0].header, "rows": headline[0].rows,
                                                       "note": headline[1]},
            "rows": records}, out


def write_view(folder: Path, out: Path | None = None, headline: Headline | None = None) -> Path:
    """Write view.html for `folder` into `out` (by default beside report.html when a score folder exists, else
    into `folder`) and return its path."""
    data, beside = view_data(folder, headline)
    path = (out or beside) / PAGE
    path.parent.mkdir(parents=True, exist_ok=True)
    write_text(path, render_page(data))
    return path


def view_for_report(score_dir: Path, out: Path, headline: Headline | None = None) -> Path | None:
    """The page `spec report` writes beside report.html (into `out`) when the score folder is the score/ folder
    of a run or study, whose answers it shows; None for a score folder of a published table."""
    parent = score_dir.resolve().parent
    if not (parent / RUN_FILE).is_file() and not is_study(parent):
        return None
    return write_view(parent, out, headline)
