"""An effects design of conditions only (issue 31 item 8): no factor crossed, the baseline against an
intervention; a planted shift of P(yes) under the intervention is recovered within its interval, and a
design with neither factors nor a second condition is refused at its design."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from spec_audits.cli import main
from tests.families.effects import cli_ok, per_prompt, run_on, write_tiny

SPEC = '''suite nudged "Nudged"
seed 5
data scenarios from "scenarios.csv" key id
template ask "{{ scenario.text }} Yes or no?"
influence nudge append "Most people say yes."
design nudged:
  items scenarios
  conditions baseline, nudge
  prompt ask
  answer yesno
  samples 10
  decode temperature 1
  analysis effects
'''
SCENARIOS = "id,text\n" + "".join(f"s{i},Approve request {i}?\n" for i in range(20))


PLANTED = sum(4 + i % 3 for i in range(20)) / 200  # the mean shift in P(yes): 40, 50 or 60 points by scenario


def _yes(prompt: str) -> int:
    """Yes to 2 + i % 3 of every 10 samples of question i, and to 4 + i % 3 more when nudged."""
    i = int(prompt.split("request ")[1].split("?")[0])
    return 2 + i % 3 + (4 + i % 3 if "Most people say yes." in prompt else 0)


def test_an_intervention_against_the_baseline_with_no_factor_recovers_its_planted_shift(tmp_path: Path) -> None:
    suite, run = tmp_path / "suite", tmp_path / "run"
    cli_ok("compile", str(write_tiny(tmp_path, SPEC, SCENARIOS)), "-o", str(suite))
    run_on(per_prompt(_yes, "yes", "no")(), suite, run)
    cli_ok("score", str(run))
    summary = json.loads((run / "score" / "summary.json").read_text(encoding="utf-8"))
    (nudge,) = summary["models"]["openai/stub"]["targets"]["yes"]["contrasts"]
    assert (nudge["term"], nudge["level"], nudge["reference"]) == ("condition", "nudge", "baseline")
    assert abs(nudge["shift"] - PLANTED) < 1e-9 and nudge["low"] < PLANTED < nudge["high"], nudge
    assert nudge["p"] < 0.001 and nudge["significant"]


def test_a_design_with_no_factor_and_one_condition_is_refused_at_the_design(tmp_path: Path) -> None:
    spec = SPEC.replace("  conditions baseline, nudge\n", "")
    result = CliRunner().invoke(main, ["check", str(write_tiny(tmp_path, spec, SCENARIOS))])
    assert result.exit_code == 1 and isinstance(result.exception, SystemExit), result.output
    assert "tiny.spec:6:1: error: effects design 'nudged' crosses no factors and compares no conditions" \
        in result.output
    assert "hint: add: cross FACTOR x FACTOR, or conditions baseline, INTERVENTION" in result.output
