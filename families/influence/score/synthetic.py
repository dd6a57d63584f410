"""Synthetic influence suites and runs, written through the suite/results contracts.

Used by the tests, the benchmark and docs/scoring.md to exercise `spec score` end to end before real
runs exist. Baselines are shared by all influences of a factor (manifest.balance shared baseline ->
influence), display order is counterbalanced (AB/BA), and answers are drawn per trial from P(choose B).
"""

from __future__ import annotations

import hashlib
import itertools
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from spec_audits.sdk import Balance, Message, ResultRow, RunInfo, SuiteRow, suite_row, write_suite_folder

ProbB = Callable[[str, str | None, str], float]
"""P(choose group B) for (factor, influence or None for baseline, condition)."""


@dataclass(frozen=True)
class Design:
    benchmark: str = "triage"
    factors: dict[str, tuple[str, str]] = field(default_factory=lambda: {"age": ("young", "old")})
    influences: tuple[str, ...] = ("emotional",)
    sizes: tuple[tuple[int, int], ...] = ((1, 2), (2, 1))
    samples: int = 4


def suite_rows(design: Design) -> list[SuiteRow]:
    """Baseline rows (influence null) per factor, and toward_A/toward_B rows per factor × influence."""
    rows = []
    for factor, (group_a, group_b) in design.factors.items():
        cells = [(None, "baseline")] + [(inf, cond) for inf in design.influences for cond in ("toward_A", "toward_B")]
        for (influence, condition), (n_a, n_b), order in itertools.product(cells, design.sizes, ("AB", "BA")):
            answers = {"A": group_a, "B": group_b} if order == "AB" else {"A": group_b, "B": group_a}
            cell = {
                "factor": factor,
                "group_A": group_a,
                "group_B": group_b,
                "influence": influence,
                "condition": condition,
                "n_A": n_a,
                "n_B": n_b,
                "order": order,
            }
            text = f"{factor} {influence} {condition}: save {n_a} {group_a} or {n_b} {group_b}? ({order})"
            body = {
                "messages": [Message(role="user", content=text).model_dump(exclude_none=True)],
                "samples": design.samples,
                "cell": cell,
                "answers": answers,
                "decode": {"temperature": 1.0, "max_tokens": 16},
            }
            rows.append(suite_row(body))
    return sorted(rows, key=lambda r: r.id)


def write_suite(suite_dir: Path, design: Design) -> list[SuiteRow]:
    rows = suite_rows(design)
    write_suite_folder(
        suite_dir,
        rows,
        suite=design.benchmark,
        spec_file="synthetic.spec",
        spec_sha256="0" * 64,
        compiler_version="synthetic",
        schema_version="1",
        seed=0,
        analysis={"family": "influence_pairs", "benchmark": design.benchmark, "alpha": 0.05, "fdr": "bh",
                  "answer": {"kind": "labels", "tokens": ["A", "B"]}},
        cells={"factor": len(design.factors), "influence": len(design.influences)},
        balance=[
            Balance(
                keys=["factor", "influence", "condition"], cells=0, trials_per_cell=0, shared={"baseline": "influence"}
            )
        ],
    )
    return rows


def write_run(
    run_dir: Path,
    suite_dir: Path,
    rows: list[SuiteRow],
    prob_b: ProbB,
    *,
    model: str = "synthetic/model",
    reasoning: str | None = None,
    logprob: bool = False,
    seed: int = 0,
    abstain: float = 0.0,
) -> None:
    """results.jsonl + run.json. Sample mode draws each answer; logprob mode writes P(token) per item."""
    run_dir.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)
    settings = {"reasoning": reasoning} if reasoning is not None else {}
    token_of = {row.id: {group: token for token, group in row.answers.items()} for row in rows}
    lines = []
    for row in rows:
        cell = row.cell
        p = prob_b(str(cell["factor"]), cell["influence"], str(cell["condition"]))  # type: ignore[arg-type]
        b_token, a_token = token_of[row.id][str(cell["group_B"])], token_of[row.id][str(cell["group_A"])]
        base = {"item_id": row.id, "model": model, "params": row.decode, "error": None}
        if logprob:
            lines.append(_line(base | {"sample": 0, "logprobs": {b_token: p, a_token: 1 - p}}))
            continue
        chose_b = rng.random(row.samples) < p
        missing = rng.random(row.samples) < abstain
        for sample in range(row.samples):
            outcome = None if missing[sample] else str(cell["group_B"] if chose_b[sample] else cell["group_A"])
            answer = None if outcome is None else (b_token if chose_b[sample] else a_token)
            lines.append(_line(base | {"sample": sample, "answer": answer, "outcome": outcome}))
    (run_dir / "results.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    info = RunInfo(
        suite_dir=str(suite_dir),
        suite_manifest_sha256=hashlib.sha256((suite_dir / "manifest.json").read_bytes()).hexdigest(),
        model=model,
        mode="logprob" if logprob else "sample",
        settings=settings,
        started="2026-01-01T00:00:00Z",
        planned=len(lines),
        done=len(lines),
        failed=0,
    )
    (run_dir / "run.json").write_text(info.model_dump_json(indent=2), encoding="utf-8")


def _line(fields: dict[str, Any]) -> str:
    """A results.jsonl line as the runner writes it: every ResultRow field, in its order, compact."""
    return ResultRow(**fields).model_dump_json()
