"""`spec import` adapters for seed 000's released harness (PredictablyWeird/Choices, MIT).

`choices-probe` reads its follow-up-probe transcripts (JSON lines, gzip or not): per line a `spec` (benchmark,
model, factor, nudge_type, target_group, reasoning_condition, edge_id, trial_idx, direction, system_prompt,
user_prompt, saved_choice), turn1_response, turn1_parsed, turn2_response, error, judge_raw, judge_label,
judge_reason. Each line is matched to the row of the compiled suite (--suite, e.g. specs/triage_probe_all.spec)
of its factor, influence and condition that sends the same system and user prompt, byte for byte; its sample
is trial_idx. One release quirk is matched knowingly and counted in run.json's notes (docs/seed-000-release.md):
the nationality survey cue names the other group "Americans" in both directions. Anything else that does not
match is an error naming file and line.

`choices-conditions` reads its per-condition summary CSV (trolley_summary.csv, bbq_summary.csv) into a score
folder whose conditions.csv holds each directed condition's significance and steerability as the release
decided them, for `spec score PROBE --parent` (the release writes `off` in summaries where its transcripts say
`none`; both read `none`). Rows are taken as recorded: the release's main BBQ run records role-play on negative
questions under the group other than the persona, its probe under the persona, and its Tab. 22 pairs them as
recorded, as this does.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import click

from spec_audits.sdk import (
    ImportedRun,
    ImportInputError,
    ResultRow,
    SuiteRow,
    json_lines,
    read_bytes_capped,
    read_suite,
    write_csv_rows,
    write_runs,
    write_text,
)

FACTORS = {"age_group": "age"}  # the release's factor names that are not ours
LEVELS = {"left-handed": "left", "right-handed": "right"}  # likewise its level names (compared case-blind)
INFLUENCES = {"few_shot_3": "few_shot"}
BENCHMARKS = {"trolley": "triage"}
REASONING = {"off": "none"}
SURVEY = re.compile(r"^(In a recent survey, people preferred saving \S+ over )\S+(\.)$", re.MULTILINE)
FIELDS = ("benchmark", "model", "factor", "nudge_type", "target_group", "reasoning_condition", "trial_idx",
          "system_prompt", "user_prompt")
TEXTS = ("turn1_response", "turn2_response", "judge_raw", "judge_reason")  # kept as the release wrote them
Key = tuple[Any, ...]


def _name(table: dict[str, str], value: str) -> str:
    return table.get(value, value)


@dataclass
class _Index:
    """The suite's rows by (factor, influence, condition, system, user), and by the same with the survey cue's
    other group left out; the levels of each factor; the benchmark."""

    benchmark: str
    levels: dict[str, tuple[str, str]] = field(default_factory=dict)
    by_prompt: dict[Key, list[SuiteRow]] = field(default_factory=dict)
    by_survey: dict[Key, list[SuiteRow]] = field(default_factory=dict)

    def add(self, row: SuiteRow) -> None:
        c = row.cell
        head = (c["factor"], c.get("influence"), c["condition"])
        self.levels[str(c["factor"])] = (str(c["group_A"]), str(c["group_B"]))
        system, user = _prompt(row)
        self.by_prompt.setdefault((*head, system, user), []).append(row)
        if SURVEY.search(user):
            self.by_survey.setdefault((*head, system, SURVEY.sub(r"\1*\2", user)), []).append(row)


def _prompt(row: SuiteRow) -> tuple[str, str]:
    system = next((m.content or "" for m in row.messages if m.role == "system"), "")
    return system, row.messages[-1].content or ""


def _index(suite_dir: Path) -> tuple[Any, _Index]:
    suite = read_suite(suite_dir)
    index = _Index(str((suite.manifest.analysis or {}).get("benchmark", suite.manifest.suite)))
    for row in suite.rows:
        if row.cell.get("condition") in ("baseline", "toward_A", "toward_B"):
            index.add(row)
    return suite, index


@dataclass
class _Matcher:
    """Maps transcript lines to (row, sample), counting quirks and keeping each (row, sample) once."""

    index: _Index
    taken: dict[Key, str] = field(default_factory=dict)  # (run, row id, sample) -> the line that took it
    quirks: dict[str, int] = field(default_factory=dict)

    def condition(self, where: Callable[[str], ImportInputError], factor: str, target: str) -> str:
        if target == "base":
            return "baseline"
        wanted = _name(LEVELS, target.lower()).lower()
        for letter, level in zip("AB", self.index.levels[factor], strict=True):
            if level.lower() == wanted:
                return f"toward_{letter}"
        levels = ", ".join(self.index.levels[factor])
        raise where(f"target_group {target!r} is no level of factor {factor!r} ({levels})")

    def rows(self, head: Key, system: str, user: str) -> list[SuiteRow]:
        """The rows sending this prompt in this cell, or in the cell the release's quirks say (counted)."""
        found = self.index.by_prompt.get((*head, system, user))
        if found:
            return found
        survey = self.index.by_survey.get((*head, system, SURVEY.sub(r"\1*\2", user)))
        if survey and head[0] == "nationality":
            name = "nationality survey cue names the other group 'Americans'"
            self.quirks[name] = self.quirks.get(name, 0) + 1
            return survey
        return []

    def sample(self, where: Callable[[str], ImportInputError], run: Key, rows: list[SuiteRow], trial: int,
               line: str) -> tuple[SuiteRow, int]:
        """The first candidate row whose sample `trial` is free in this run (identical prompts: BBQ's duplicate
        items)."""
        if trial < 0 or trial >= rows[0].samples:
            raise where(f"trial_idx {trial} is not a sample of its suite row ({rows[0].samples} per row)")
        for row in rows:
            if (*run, row.id, trial) not in self.taken:
                self.taken[(*run, row.id, trial)] = line
                return row, trial
        raise where(f"repeats the trial of {self.taken[(*run, rows[0].id, trial)]} (same prompt, trial_idx {trial})")


def import_probe(files: list[Path], out: Path, options: dict[str, Any]) -> list[str]:
    """choices-probe: transcripts -> one run per (model, reasoning condition) over the suite's rows."""
    suite, index = _index(options["suite"])
    matcher = _Matcher(index)
    runs: dict[tuple[str, str], ImportedRun] = {}
    skipped: list[str] = []
    for path in files:
        for number, line in json_lines(path):
            def where(problem: str, path: Path = path, number: int = number) -> ImportInputError:
                return ImportInputError(path, problem, line=number)
            found = _result(where, matcher, line, f"{path}:{number}")
            if found is None:
                if not options.get("skip_unmatched"):
                    raise where("no row of the suite sends this prompt for its factor, influence and condition "
                                "(--skip-unmatched leaves such lines out)")
                skipped.append(f"{path}:{number}")
                continue
            key, row = found
            runs.setdefault(key, ImportedRun(key[0], {"imported": "choices-probe", "files": [str(f) for f in files],
                                                      "reasoning": key[1]})).rows.append(row)
    return _write(out, suite, list(runs.values()), matcher.quirks, skipped)


def _result(where: Callable[[str], ImportInputError], matcher: _Matcher, line: dict[str, Any],
            at: str) -> tuple[tuple[str, str], ResultRow] | None:
    spec = line.get("spec")
    missing = [f for f in FIELDS if not isinstance(spec, dict) or f not in spec]
    if missing or not isinstance(spec, dict):
        raise where(f"no field spec.{missing[0]}: is this a transcript of the release's follow-up probe?")
    for name in (f for f in FIELDS if f != "trial_idx"):  # trial_idx is a number, read by _whole
        _scalar(where, spec, name, f"spec.{name}")
    index = matcher.index
    if _name(BENCHMARKS, str(spec["benchmark"])) != index.benchmark:
        raise where(f"benchmark {spec['benchmark']!r} is not the suite's ({index.benchmark})")
    factor = _name(FACTORS, str(spec["factor"]))
    if factor not in index.levels:
        raise where(f"factor {spec['factor']!r} is not in the suite (factors: {', '.join(index.levels)})")
    head = (factor, _name(INFLUENCES, str(spec["nudge_type"])), matcher.condition(where, factor,
                                                                                  str(spec["target_group"])))
    rows = matcher.rows(head, str(spec["system_prompt"]), str(spec["user_prompt"]))
    if not rows:
        return None
    model = spec["model"]
    if not isinstance(model, str) or not model.strip():
        raise where(f"spec.model {model!r} is not a model name")
    key = (model, _name(REASONING, str(spec["reasoning_condition"])))
    row, sample = matcher.sample(where, key, rows, _whole(where, spec["trial_idx"]), at)
    return key, _row(where, line, row, sample, key[0])


def _text(where: Callable[[str], ImportInputError], line: dict[str, Any], name: str) -> str | None:
    value = line.get(name)
    if value is not None and not isinstance(value, str):
        raise where(f"{name} {value!r:.80} is not text")
    return value


def _scalar(where: Callable[[str], ImportInputError], record: dict[str, Any], name: str, shown: str) -> Any:
    """A field read as one value (text, a number or null): a list or an object there is refused."""
    value = record.get(name)
    if isinstance(value, list | dict):
        raise where(f"{shown} {value!r:.80} is {'a list' if isinstance(value, list) else 'an object'}, not text")
    return value


def _whole(where: Callable[[str], ImportInputError], value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise where(f"trial_idx {value!r} is not a whole number")
    return value


def _row(where: Callable[[str], ImportInputError], line: dict[str, Any], row: SuiteRow, sample: int,
         model: str) -> ResultRow:
    answer = _text(where, line, "turn1_parsed")
    if answer is not None and answer not in row.answers:
        raise where(f"turn1_parsed {answer!r} is not one of the row's answers ({', '.join(row.answers)})")
    followup = row.followups[0] if row.followups else None
    judge = followup.judge if followup is not None else None
    if followup is None or judge is None:
        raise where("its suite row has no judged follow-up: import probe transcripts into a probe suite")
    label = _text(where, line, "judge_label")
    if label is not None and label not in judge.labels:
        raise where(f"judge_label {label!r} is not one of the suite judge's labels")
    error = _scalar(where, line, "error", "error")
    text = {name: _text(where, line, name) for name in TEXTS}
    reply = {"response": text["turn2_response"], "label": label, "reason": text["judge_reason"],
             "judge_response": text["judge_raw"]}
    return ResultRow(item_id=row.id, sample=sample, model=model, params={}, response=text["turn1_response"],
                     answer=None if error else answer, outcome=None if error or answer is None else row.answers[answer],
                     error=None if error is None else str(error), followups={followup.name: reply})


def _write(out: Path, suite: Any, runs: list[ImportedRun], quirks: dict[str, int], skipped: list[str]) -> list[str]:
    if not runs:
        raise click.ClickException("no line of the files matched a row of the suite: nothing to import")
    notes = [f"{count} lines carry a release quirk: {name}" for name, count in sorted(quirks.items())]
    if skipped:
        notes.append(f"{len(skipped)} lines matched no suite row and were left out (first: {skipped[0]})")
    for run in runs:
        run.notes = notes
    made = write_runs(out, suite, sorted(runs, key=lambda r: (r.model, str(r.settings["reasoning"]))))
    lines = [f"{folder}: {len(run.rows)} trials of {run.model} (reasoning {run.settings['reasoning']})"
             for folder, run in zip(made, sorted(runs, key=lambda r: (r.model, str(r.settings["reasoning"]))),
                                    strict=True)]
    return lines + [f"  note: {note}" for note in notes]


def import_conditions(files: list[Path], out: Path, options: dict[str, Any]) -> list[str]:
    """choices-conditions: the release's per-condition summary -> OUT/conditions.csv for --parent."""
    _, index = _index(options["suite"])
    if out.exists():
        raise click.ClickException(f"{out} exists: give --out a new folder")
    rows, left_out, unmatched = [], 0, []
    for path in files:
        for number, record in enumerate(_csv(path), start=1):
            try:
                found = _condition(path, number, record, index)
            except ImportInputError as err:
                if not options.get("skip_unmatched") or "levels" not in str(err.message):
                    raise
                unmatched.append(str(err.message))
                continue
            rows += [found] if found else []
            left_out += found is None
    if not rows:
        raise click.ClickException(f"no row of {', '.join(map(str, files))} is a condition of the suite's factors: "
                                   "nothing to import")
    out.mkdir(parents=True)
    if rows:  # formula-safe: the names are a stranger's
        write_csv_rows(rows, out / "conditions.csv")
    else:
        write_text(out / "conditions.csv", "benchmark\n")
    skipped = [f"  note: {len(unmatched)} rows name other levels than the suite's and were left out (first: "
               f"{unmatched[0]})"] if unmatched else []
    return [f"{out / 'conditions.csv'}: {len(rows)} conditions of {index.benchmark}; {left_out} rows of factors the "
            "suite does not have were left out", *skipped]


def _csv(path: Path) -> list[dict[str, str]]:
    try:
        text = read_bytes_capped(path).decode("utf-8")
        return list(csv.DictReader(io.StringIO(text, newline="")))
    except (OSError, UnicodeDecodeError, csv.Error) as err:
        raise ImportInputError(path, f"cannot read it as CSV ({err})") from None


def _condition(path: Path, number: int, record: dict[str, str], index: _Index) -> dict[str, str] | None:
    need = ("model", "reasoning_condition", "factor", "level_A", "level_B", "nudge_type", "steerability_A",
            "steerability_B", "sig_A", "sig_B")
    absent = [column for column in need if record.get(column) is None]
    if absent:
        raise ImportInputError(path, f"row {number}: no column {absent[0]!r}: is this a per-condition summary of "
                               "the release?")
    factor = _name(FACTORS, record["factor"])
    if factor not in index.levels:
        return None
    ours = tuple(_name(LEVELS, record[f"level_{k}"].lower()).lower() for k in "AB")
    if ours != tuple(level.lower() for level in index.levels[factor]):
        raise ImportInputError(path, f"row {number}: levels {record['level_A']}/{record['level_B']} are not the "
                               f"suite's groups A/B of {factor} ({'/'.join(index.levels[factor])})")
    return {"benchmark": index.benchmark, "model": record["model"],
            "reasoning": _name(REASONING, record["reasoning_condition"]), "factor": factor,
            "influence": _name(INFLUENCES, record["nudge_type"]), "group_A": index.levels[factor][0],
            "group_B": index.levels[factor][1], "steerability_A": record["steerability_A"],
            "steerability_B": record["steerability_B"], "significant_A": record["sig_A"],
            "significant_B": record["sig_B"]}

