"""The synthetic suites of benchmarks/scale_bench.py's `--family`: each family's shipped spec with its data made
up to about the asked number of rows (a spec and its data written into a folder), and the answer a row gets
when the benchmark answers it without a call (a token of the row by a hash of its id, as the stub answers).

Rows per unit of data, and so what each design realistically reaches:
* effects: specs/demographic_decisions.spec (9 ages x 3 genders x 5 races x 2 conditions = 270 rows a scenario)
  with clustered errors (`analysis effects`; its shipped `scenarios random` fits MixedLM, row by row, which takes
  minutes at 100k rows: docs/scoring.md). A many-factor design passes a million rows.
* cue: specs/cue_visibility.spec, its 100 dilemmas repeated under new ids (194 rows a dilemma: 19,400 for the
  shipped 100). A million rows would be 5,155 dilemmas; the paper has 100.
* cognitive_bias: specs/cognitive_bias.spec, its bank head repeated under new scenario ids. The paper's bank is
  24,300 rows.
* puzzle_solving: specs/puzzle_solving.spec with more certified puzzles per band (5 bands), at most 30 a band (150
  rows): a band draws distinct solutions, of which the identity puzzle has 120 and the row puzzle 36, so no
  puzzle-solving design reaches 10,000 rows.
"""

from __future__ import annotations

import csv
import hashlib
import io
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SPECS = ROOT / "specs"
PUZZLES = 30  # certified puzzles per band at most (the row puzzle has 36 distinct solutions)


def _read(name: str) -> str:
    return (SPECS / name).read_text(encoding="utf-8")


def _repeat_csv(source: Path, target: Path, rows: int, key: str) -> None:
    """`rows` data rows: the source's repeated in order, each copy's `key` made unique."""
    with source.open(encoding="utf-8", newline="") as handle:
        reader = csv.DictReader(handle)
        fields, records = list(reader.fieldnames or []), list(reader)
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=fields)
    writer.writeheader()
    for index in range(rows):
        record = dict(records[index % len(records)])
        record[key] = f"{record[key]}x{index // len(records)}" if index >= len(records) else record[key]
        writer.writerow(record)
    target.write_text(out.getvalue(), encoding="utf-8")


def effects(folder: Path, rows: int) -> Path:
    scenarios = max(2, round(rows / 270))
    lines = ["id,subject,details,question"] + [
        f"s{i},A person has applied for case {i}.,Their record is mixed but improving.,Should it be approved?"
        for i in range(scenarios)]
    (folder / "scenarios.csv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    text = _read("demographic_decisions.spec").replace('"data/demographic_decisions/scenarios.csv"', '"scenarios.csv"')
    return _write(folder, text.replace("analysis effects scenarios random", "analysis effects"))


def cue(folder: Path, rows: int) -> Path:
    source = SPECS / "data" / "dailydilemmas" / "dailydilemmas_100.csv"
    _repeat_csv(source, folder / "dilemmas.csv", max(5, round(rows / 194)), "id")
    text = _read("cue_visibility.spec").replace('"data/dailydilemmas/dailydilemmas_100.csv"', '"dilemmas.csv"')
    return _write(folder, text)


def cognitive_bias(folder: Path, rows: int) -> Path:
    source = SPECS / "data" / "cognitive_bias" / "bank.head.csv"
    _repeat_csv(source, folder / "bank.csv", max(10, round(rows / 2.3)), "scenario_id")
    scenarios = SPECS / "data" / "cognitive_bias" / "scenarios.head.csv"
    (folder / "scenarios.csv").write_bytes(scenarios.read_bytes())
    text = _read("cognitive_bias.spec").replace('"data/cognitive_bias/bank.head.csv"', '"bank.csv"')
    return _write(folder, text.replace('"data/cognitive_bias/scenarios.head.csv"', '"scenarios.csv"'))


def puzzle_solving(folder: Path, rows: int) -> Path:
    """At most PUZZLES per band, whatever the size asked: the identity puzzle has 120 distinct combinations."""
    text = _read("puzzle_solving.spec")
    return _write(folder, text.replace("count 5 per band", f"count {min(PUZZLES, max(1, rows // 5))} per band"))


def _write(folder: Path, text: str) -> Path:
    path = folder / "scale.spec"
    path.write_text(text, encoding="utf-8")
    return path


FAMILIES: dict[str, Callable[[Path, int], Path]] = {
    "effects": effects, "cue": cue, "cognitive_bias": cognitive_bias, "puzzle_solving": puzzle_solving}
# the answer tokens of a family's rows, for the stub to answer with where they are not its A and B: a logprob run
# (effects) has no answer at all where none of its row's tokens is among the reply's logprobs
STUB_TOKENS = {"effects": "yes,no"}


def token(item_id: str, tokens: list[str]) -> str:
    """The token the benchmark answers for a row it did not run: one of the row's, by a hash of its id."""
    return tokens[hashlib.sha256(item_id.encode()).digest()[0] % len(tokens)]
