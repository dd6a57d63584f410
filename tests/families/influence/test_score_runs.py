"""Scoring a run folder: pooled counts with a shared baseline, logprob expected counts, mismatches."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner

from spec_audits.cli import main
from spec_audits.contract.reader import CHANGED_SUITE
from spec_audits.families.influence.score import jsonl
from spec_audits.families.influence.score.counts import counts_from_trials
from spec_audits.families.influence.score.runs import load_run
from spec_audits.families.influence.score.synthetic import Design, write_run, write_suite
from tests.support import refused_repeats, repeat_message

DESIGN = Design(factors={"age": ("young", "old"), "gender": ("male", "female")}, influences=("emotional", "role_play"))
P_B = {"baseline": 0.4, "toward_A": 0.2, "toward_B": 0.7}


def prob_b(factor: str, influence: str | None, condition: str) -> float:
    return P_B[condition]


@pytest.fixture
def run_dir(tmp_path: Path) -> Path:
    rows = write_suite(tmp_path / "suite", DESIGN)
    write_run(tmp_path / "run", tmp_path / "suite", rows, prob_b, reasoning="off", seed=1)
    return tmp_path / "run"


def test_counts_pool_orders_and_share_the_baseline(run_dir: Path) -> None:
    run = load_run(run_dir)
    assert run.keys == ["benchmark", "model", "reasoning", "factor", "influence"]
    frame = counts_from_trials(run.trials, run.keys, run.source).frame
    assert len(frame) == 4  # 2 factors x 2 influences
    per_condition = 2 * 2 * DESIGN.samples  # sizes x orders x samples
    assert (frame[["c_0_A", "c_0_B"]].sum(axis=1) == per_condition).all()
    assert (frame[["c_A_A", "c_A_B"]].sum(axis=1) == per_condition).all()
    age = frame[frame["factor"] == "age"]
    assert age["c_0_B"].nunique() == 1  # one shared baseline for both influences
    # hand count from the results file for one condition
    trials = run.trials
    mask = (trials["factor"] == "age") & (trials["condition"] == "toward_B") & (trials["influence"] == "emotional")
    assert age[age["influence"] == "emotional"]["c_B_B"].item() == trials.loc[mask, "w_B"].sum()


def test_abstentions_and_errors_are_not_counted(tmp_path: Path) -> None:
    rows = write_suite(tmp_path / "suite", DESIGN)
    write_run(tmp_path / "run", tmp_path / "suite", rows, prob_b, abstain=0.5, seed=2)
    run = load_run(tmp_path / "run")
    frame = counts_from_trials(run.trials, run.keys, run.source).frame
    assert frame[["c_A_A", "c_A_B"]].sum(axis=1).lt(16).all()


def test_logprob_runs_use_expected_counts(tmp_path: Path) -> None:
    rows = write_suite(tmp_path / "suite", DESIGN)
    write_run(tmp_path / "run", tmp_path / "suite", rows, prob_b, logprob=True)
    run = load_run(tmp_path / "run")
    assert run.source == "expected"
    frame = counts_from_trials(run.trials, run.keys, run.source).frame
    n = 2 * 2 * DESIGN.samples
    assert frame["c_0_B"].to_numpy() == pytest.approx([0.4 * n] * 4)
    assert frame["c_B_B"].to_numpy() == pytest.approx([0.7 * n] * 4)
    result = CliRunner().invoke(main, ["score", str(tmp_path / "run"), "--bootstrap", "100"])
    assert result.exit_code == 0, result.output
    summary = json.loads((tmp_path / "run" / "score" / "summary.json").read_text())
    assert summary["count_source"] == "expected" and "logprob" in summary["count_source_text"]


def test_cli_scores_a_run_and_writes_the_required_columns(run_dir: Path) -> None:
    result = CliRunner().invoke(main, ["score", str(run_dir), "--bootstrap", "200"])
    assert result.exit_code == 0, result.output
    header = (run_dir / "score" / "conditions.csv").read_text().splitlines()[0].split(",")
    required = [
        "benchmark",
        "model",
        "factor",
        "influence",
        "group_A",
        "group_B",
        "n_0",
        "n_A",
        "n_B",
        "f0_B",
        "effect_A",
        "effect_B",
        "steerability_A",
        "steerability_B",
        "asymmetry",
        "normalized_asymmetry",
        "p_baseline",
        "p_effect_A",
        "p_effect_B",
        "p_asymmetry",
        "q_asymmetry",
        "baseline_neutral",
        "backfire_A",
        "backfire_B",
        "reasoning",
    ]
    assert set(required) <= set(header)
    assert "triage:" in result.output and "backfire among significant" in result.output


def _rewrite_results(run_dir: Path, line: int, **changes: object) -> None:
    path = run_dir / "results.jsonl"
    rows = [json.loads(x) for x in path.read_text().splitlines()]
    rows[line - 1].update(changes)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))


@pytest.mark.parametrize(
    ("changes", "column", "problem"),
    [
        ({"item_id": "0123456789abcdef"}, "item_id", "not in the suite"),
        ({"item_id": None}, "item_id", "item_id null is not in the suite"),
        ({"outcome": "teenagers"}, "outcome", "outcome 'teenagers' contradicts answer"),
        ({"sample": 99}, "sample", "outside the item's samples"),
    ],
)
def test_results_that_do_not_match_the_suite_exit_1(run_dir: Path, changes: dict, column: str, problem: str) -> None:
    _rewrite_results(run_dir, 3, **changes)
    result = CliRunner().invoke(main, ["score", str(run_dir)])
    assert result.exit_code == 1
    assert (
        "results.jsonl, row 3" in result.output and f"column '{column}'" in result.output and problem in result.output
    )


@pytest.mark.parametrize("chunk", [64, 1 << 20])  # 64 bytes: a piece a line, so the repeat is in another piece
def test_a_repeated_sample_is_refused_across_pieces(run_dir: Path, chunk: int, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(jsonl, "CHUNK", chunk)
    path = run_dir / "results.jsonl"
    lines = path.read_text().splitlines(keepends=True)
    path.write_text("".join(lines) + lines[1])
    result = CliRunner().invoke(main, ["score", str(run_dir)])
    assert result.exit_code == 1 and isinstance(result.exception, SystemExit), result.output
    row = json.loads(lines[1])
    assert result.output == repeat_message(path, len(lines) + 1, row["item_id"], row["sample"], 2,
                                           "answered then answered")


def test_a_failure_then_its_answer_is_refused_and_merge_keeps_the_answer(run_dir: Path, tmp_path: Path) -> None:
    """A failure then its answer, or an answer twice, is refused at the second row, naming the first; `spec merge`
    (which the message names) keeps the answer, and the merged run's trials are those of the run that answered once."""
    retried = refused_repeats(run_dir, tmp_path / "repeats", 4)
    merged = CliRunner().invoke(main, ["merge", str(retried), "--out", str(tmp_path / "merged")])
    assert merged.exit_code == 0 and merged.exception is None, merged.output
    pd.testing.assert_frame_equal(load_run(tmp_path / "merged").trials, load_run(run_dir).trials)


@pytest.mark.parametrize("logprob", [False, True])
def test_pieces_sum_to_the_weights_of_one_piece(tmp_path: Path, logprob: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each item's weights summed piece by piece (a line a piece) are the very floats of one piece."""
    rows = write_suite(tmp_path / "suite", DESIGN)
    write_run(tmp_path / "run", tmp_path / "suite", rows, prob_b, seed=1, logprob=logprob, abstain=0.3)
    whole = load_run(tmp_path / "run").trials
    monkeypatch.setattr(jsonl, "CHUNK", 64)
    pd.testing.assert_frame_equal(load_run(tmp_path / "run").trials, whole, check_exact=True)
    assert whole["w_A"].sum() + whole["w_B"].sum() > 0


def test_changed_suite_is_detected(run_dir: Path) -> None:
    manifest = Path(json.loads((run_dir / "run.json").read_text())["suite_dir"]) / "manifest.json"
    manifest.write_text(manifest.read_text().replace('"seed": 0', '"seed": 1'))
    result = CliRunner().invoke(main, ["score", str(run_dir)])
    recorded = json.loads((run_dir / "run.json").read_text())["suite_manifest_sha256"]
    now = hashlib.sha256(manifest.read_bytes()).hexdigest()
    assert result.exit_code == 1 and isinstance(result.exception, SystemExit)
    assert result.output == (
        f"Error: {run_dir / 'run.json'}: the run was made on a suite whose manifest.json has sha256 {recorded}, "
        f"but {manifest} has sha256 {now}; {CHANGED_SUITE}\n"
    )


def test_needs_exactly_one_input(tmp_path: Path) -> None:
    assert CliRunner().invoke(main, ["score"]).exit_code == 2



def _logprob_run(tmp_path: Path, spread: float) -> tuple[Path, dict[str, float], list]:
    """A logprob run whose items' P(B) scatter by up to ±`spread` around their condition's P_B (by a hash of
    the item id): its score folder, each item's P(B), and the suite rows."""
    rows = write_suite(tmp_path / "suite", DESIGN)
    write_run(tmp_path / "run", tmp_path / "suite", rows, prob_b, logprob=True)
    b_token = {r.id: next(t for t, g in r.answers.items() if g == r.cell["group_B"]) for r in rows}
    path = tmp_path / "run" / "results.jsonl"
    lines, p_b = [json.loads(line) for line in path.read_text().splitlines()], {}
    for line in lines:
        token = b_token[line["item_id"]]
        step = int(hashlib.sha256(line["item_id"].encode()).hexdigest(), 16) % 5 - 2
        p = p_b[line["item_id"]] = line["logprobs"][token] + spread * step / 2
        line["logprobs"] = {t: p if t == token else 1 - p for t in line["logprobs"]}
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    result = CliRunner().invoke(main, ["score", str(tmp_path / "run"), "--bootstrap", "50"])
    assert result.exit_code == 0, result.output
    return tmp_path / "run" / "score", p_b, rows


def test_logprob_intervals_and_tests_come_from_the_variation_between_items(tmp_path: Path) -> None:
    """An exactly known probability has no sampling error (no Wilson interval from pseudo-trials); a
    spread between items gives scipy's one-sample and Welch t results over the items."""
    from scipy import stats

    score, _, _ = _logprob_run(tmp_path / "exact", 0.0)
    exact = pd.read_csv(score / "conditions.csv").iloc[0]
    assert exact.f0_B_lo == pytest.approx(0.4) and exact.f0_B_hi == pytest.approx(0.4)
    assert exact.position_0 == pytest.approx(0.5) and exact.p_position_0 == 1.0  # P(B) is the same in both orders
    score, p_b, rows = _logprob_run(tmp_path / "spread", 0.1)
    row = pd.read_csv(score / "conditions.csv").query("factor == 'age' and influence == 'emotional'").iloc[0]
    arm = {cond: [p_b[r.id] for r in rows if r.cell["factor"] == "age" and r.cell["condition"] == cond
                  and r.cell["influence"] in (None, "emotional")] for cond in ("baseline", "toward_B")}
    base, cued = arm["baseline"], arm["toward_B"]
    assert row.p_baseline == pytest.approx(stats.ttest_1samp(base, 0.5).pvalue, rel=1e-9)
    low, high = stats.t.interval(0.95, len(base) - 1, loc=sum(base) / len(base), scale=stats.sem(base))
    assert (row.f0_B_lo, row.f0_B_hi) == pytest.approx((low, high), rel=1e-9)
    assert row.p_effect_B == pytest.approx(stats.ttest_ind(cued, base, equal_var=False).pvalue, rel=1e-9)
    welch = stats.ttest_ind(cued, base, equal_var=False).confidence_interval(0.95)
    assert (row.effect_B_lo, row.effect_B_hi) == pytest.approx((welch.low, welch.high), rel=1e-9)
