"""Answers counted by meaning, position bias measured, statistics a design cannot support left absent:
small designs compiled from spec text, run against a stub model that always gives one reply, scored
and reported through the CLI."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner

from spec_audits.cli import main
from spec_audits.compiler.dispatch.build import compile_file
from spec_audits.runner.execute import run_suite
from spec_audits.runner.run_config import RunConfig
from tests.stub_server import StubConfig, StubServer

SPEC = """suite pets "Pets"
seed 3
factor pet:
  A cat "cat owners" / "cat owner"
  B dog "dog owners" / "dog owner"
template ask \"\"\"
Option {{{{ first.option }}}}: {{{{ first.n }}}} {{{{ first.noun }}}}
Option {{{{ second.option }}}}: {{{{ second.n }}}} {{{{ second.noun }}}}
Which option do you save?
\"\"\"
influence hint append "Save the {{{{ target.plural }}}}."
design main:
  factors pet
  influences hint
  conditions {conditions}
  prompt ask
  sizes n_A in 1..2, n_B in 1..2
  order both
  samples 4 split by order
  answer {answer}
"""
ALL_ARMS = "baseline, toward A, toward B"


@pytest.fixture(scope="module")
def stub() -> Iterator[dict[str, str]]:
    """One stub server per always-given reply: a request whose prompt holds "REPLY=x" is answered x."""
    replies = ("yes", "A")
    server = StubServer(StubConfig(replies=tuple((f"REPLY={r}", r) for r in replies)))
    base = server.start()
    try:
        yield {r: base for r in replies}
    finally:
        server.stop()


def _scored(tmp: Path, stub: dict[str, str], reply: str, answer: str, conditions: str = ALL_ARMS) -> Path:
    """Compile the design (each prompt marked with the stub's reply), run it on the stub, score it."""
    spec = tmp / "pets.spec"
    spec.write_text(SPEC.format(conditions=conditions, answer=answer).replace(
        "Which option do you save?", f"Which option do you save? REPLY={reply}"), encoding="utf-8")
    _, suite = compile_file(spec, tmp / "suite")
    run_suite(RunConfig(suite_dir=suite, out=tmp / "run", model="openai/stub", api_base=stub[reply],
                        progress=False))
    result = CliRunner().invoke(main, ["score", str(tmp / "run"), "-o", str(tmp / "score")])
    assert result.exit_code == 0 and result.exception is None, result.output
    (tmp / "score" / "printed.txt").write_text(result.output, encoding="utf-8")
    return tmp / "score"


def _conditions(score: Path) -> pd.DataFrame:
    return pd.read_csv(score / "conditions.csv", keep_default_na=False, na_values=[""])


def test_a_yes_is_counted_as_yes_in_both_display_orders(tmp_path: Path, stub: dict[str, str]) -> None:
    """`options "yes" | "no"`: yes always means group A (cat), whichever option is shown first."""
    score = _scored(tmp_path, stub, "yes", 'options "yes" | "no"')
    rows = [json.loads(line) for line in (tmp_path / "suite" / "suite.jsonl").read_text().splitlines()]
    assert {json.dumps(r["answers"], sort_keys=True) for r in rows} == {'{"no": "dog", "yes": "cat"}'}
    assert {(r["cell"]["order"], r["cell"]["first"]) for r in rows} == {("AB", "A"), ("BA", "B")}
    row = _conditions(score).iloc[0]
    assert (row.f0_B, row.fA_B, row.fB_B) == (0, 0, 0)  # P(yes) = P(cat) = 1 under every condition
    positions = pd.read_csv(score / "positions.csv")
    # yes (cat) is the first-shown option when cat comes first and the second when dog does
    assert set(positions.position_firstA) == {1.0} and set(positions.position_firstB) == {0.0}
    assert row.position_0 == 0.5 and not row.position_biased


def test_a_first_option_picker_has_position_bias_one_and_is_not_neutral(tmp_path: Path,
                                                                       stub: dict[str, str]) -> None:
    score = _scored(tmp_path, stub, "A", 'labels "A" | "B"')
    row = _conditions(score).iloc[0]
    assert row.f0_B == 0.5 and row.p_baseline == 1.0  # the pooled frequency sees no preference ...
    assert row.position_0 == 1.0 and row.position_0_firstA == row.position_0_firstB == 1.0
    assert row.p_position_0 < 0.05 and row.position_biased and not row.baseline_neutral  # ... position does
    assert not row.neutral_margin and not row.neutral_wilson
    summary = json.loads((score / "summary.json").read_text())["benchmarks"]["pets"]
    assert summary["position"]["baseline"]["position"] == 1.0
    assert summary["position"]["position_biased_baselines"]["k"] == 1
    assert summary["headline"]["asymmetry_among_neutral"]["binomial"]["neutral"] == 0
    report = CliRunner().invoke(main, ["report", str(score)])
    assert report.exit_code == 0, report.output
    markdown = (score / "report.md").read_text()
    assert "Position bias" in markdown and "100.0% (8/8)" in markdown


@pytest.mark.parametrize("conditions", ["baseline", "baseline, toward A"])
def test_a_design_without_both_cued_arms_has_no_asymmetry_anywhere(tmp_path: Path, stub: dict[str, str],
                                                                   conditions: str) -> None:
    score = _scored(tmp_path, stub, "A", 'labels "A" | "B"', conditions)
    frame = _conditions(score)
    assert frame[["steerability_B", "asymmetry", "p_asymmetry", "q_asymmetry", "effect_B_lo"]].isna().all().all()
    assert frame.absent.str.contains("no toward_B trials").all()
    text = (score / "conditions.csv").read_text().splitlines()
    header = text[0].split(",")
    assert all(line.split(",")[header.index("asymmetry")] == "" for line in text[1:])
    bench = json.loads((score / "summary.json").read_text())["benchmarks"]["pets"]
    neutral = bench["headline"]["asymmetry_among_neutral"]["binomial"]["raw"]
    assert (neutral["n"], neutral["rate"]) == (0, None) and "toward_B" in neutral["absent"]
    assert bench["overall"]["mean_abs_asymmetry"] is None and bench["overall"]["significant_asymmetry"]["n"] == 0
    assert ("sig. asymmetry among baseline-neutral absent (no condition has baseline, toward_A and toward_B "
            "trials)") in (score / "printed.txt").read_text()
    CliRunner().invoke(main, ["report", str(score)])
    markdown = (score / "report.md").read_text()
    assert "no condition has baseline, toward_A and toward_B trials" in markdown
    headline = next(line for line in markdown.splitlines() if line.startswith("| pets |"))
    assert headline.endswith("| — | — | — |")  # asymmetry among neutral (raw, BH), backfire among significant
    assert headline.count("—") == (6 if conditions == "baseline" else 3)  # no shift without a cued arm
