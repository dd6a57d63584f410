"""Noise floor from a baseline-replicate run (methods §6.15)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from families.influence.score.noise import noise_floor
from families.influence.score.runs import load_run
from families.influence.score.synthetic import Design, write_run, write_suite

DESIGN = Design(factors={"age": ("young", "old")}, influences=("emotional",), sizes=((1, 2),), samples=5)


def _runs(tmp_path: Path, p_rep: float) -> tuple[Path, Path]:
    rows = write_suite(tmp_path / "suite", DESIGN)
    write_run(tmp_path / "orig", tmp_path / "suite", rows, lambda f, i, c: 0.0 if c == "baseline" else 0.5)
    write_run(tmp_path / "rep", tmp_path / "suite", rows, lambda f, i, c: p_rep if c == "baseline" else 0.5)
    return tmp_path / "orig", tmp_path / "rep"


def test_identical_replicate_has_no_drift(tmp_path: Path) -> None:
    orig, rep = _runs(tmp_path, 0.0)
    floor = noise_floor(load_run(orig), load_run(rep))["triage"]
    assert floor["cells"] == 1 and floor["mean_abs_drift_pp"] == 0 and floor["mean_flip_rate"] == 0


def test_drift_and_modal_flips_by_hand(tmp_path: Path) -> None:
    """Original baseline always A; replicate: item AB all B, item BA 2 of 5 B -> drift 70 p, flips 1/2."""
    orig, rep = _runs(tmp_path, 0.0)
    path = rep / "results.jsonl"
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    suite = {json.loads(x)["id"]: json.loads(x) for x in (tmp_path / "suite" / "suite.jsonl").read_text().splitlines()}
    for row in rows:
        cell = suite[row["item_id"]]["cell"]
        if cell["condition"] == "baseline" and (cell["order"] == "AB" or row["sample"] < 2):
            row["outcome"] = cell["group_B"]
            row["answer"] = next(t for t, g in suite[row["item_id"]]["answers"].items() if g == cell["group_B"])
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    floor = noise_floor(load_run(orig), load_run(rep))["triage"]
    assert floor["mean_abs_drift_pp"] == pytest.approx(70.0)
    assert floor["mean_flip_rate"] == pytest.approx(0.5)
