"""Two answer forms of one scenario set in one spec (issue 31 item 8): a yes/no design and a 1-10 scale
design cross the same factor over the same scenarios. The manifest records each design's answer, the rows
carry their own tokens, and `spec score` gives each design its own block with the statistics of its form
(P(yes) shift, mean rating shift), each recovering its planted effect within its interval; designs of
different families stay refused at the design."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from spec_audits.cli import main
from spec_audits.contract.reader import read_suite
from tests.families.effects import cli_ok, run_on, write_tiny
from tests.stub_server import StubServer, _completion

SCENARIOS = "id,text\n" + "".join(f"s{i},Item {i}: grant the request?\n" for i in range(12))
SPEC = '''suite two_forms "Two forms"
seed 4
data scenarios from "scenarios.csv" key id
factor age:
  young "young"   old "old"
template agree "{{ scenario.text }} Asked by {{ age.plural }}. Yes or no?"
template rate "{{ scenario.text }} Asked by {{ age.plural }}. Rate it from 1 to 10."
design agree:
  cross age
  reference age = old
  items scenarios
  prompt agree
  answer yesno
  samples 10
  decode temperature 1
  analysis effects
design rate:
  cross age
  reference age = old
  items scenarios
  prompt rate
  answer scale 1..10
  samples 10
  decode temperature 1
  analysis effects
'''
P_YES = sum(2 + i % 3 for i in range(12)) / 120  # planted P(yes) shift of young over old: 20-40 points
RATING = sum(1 + i % 3 for i in range(12)) / 12  # planted mean rating shift of young over old: 1-3 points


class TwoForms(StubServer):
    """Yes/no: yes to 3 of every 10 samples of a question, 2 + i % 3 more when asked by the young. Rating:
    3, 4, 5 in turn (mean 3.9 of 10), 1 + i % 3 higher when asked by the young."""

    def __init__(self) -> None:
        super().__init__()
        self.seen: dict[str, int] = {}

    def completion(self, body: dict[str, object]) -> dict[str, object]:
        prompt = str(body["messages"][-1]["content"])  # type: ignore[index]
        count = self.seen[prompt] = self.seen.get(prompt, 0) + 1
        i, young = int(prompt.split("Item ")[1].split(":")[0]), "young" in prompt
        if prompt.endswith("Yes or no?"):
            return _completion(body, "yes" if (count - 1) % 10 < 3 + (2 + i % 3 if young else 0) else "no")
        return _completion(body, str(3 + (count - 1) % 3 + (1 + i % 3 if young else 0)))


def test_a_yesno_and_a_scale_design_of_one_spec_are_scored_in_their_own_blocks(tmp_path: Path) -> None:
    suite, run = tmp_path / "suite", tmp_path / "run"
    cli_ok("compile", str(write_tiny(tmp_path, SPEC, SCENARIOS)), "-o", str(suite))
    loaded = read_suite(suite)
    assert "answer" not in (loaded.manifest.analysis or {})
    assert (loaded.manifest.analysis or {})["designs"] == {
        "agree": {"answer": {"kind": "yesno", "tokens": ["yes", "no"]}},
        "rate": {"answer": {"kind": "scale", "tokens": [str(v) for v in range(1, 11)]}}}
    assert {row.cell["design"]: sorted(row.answers) for row in loaded.rows} == {
        "agree": ["no", "yes"], "rate": sorted(str(v) for v in range(1, 11))}
    run_on(TwoForms(), suite, run)
    cli_ok("score", str(run))
    summary = json.loads((run / "score" / "summary.json").read_text(encoding="utf-8"))
    assert sorted(summary["models"]) == ["openai/stub [agree]", "openai/stub [rate]"]
    agree, rate = summary["models"]["openai/stub [agree]"], summary["models"]["openai/stub [rate]"]
    assert (agree["answered"], rate["answered"]) == (240, 240)
    assert (list(agree["targets"]), list(rate["targets"])) == (["yes"], ["value"])
    (yes,) = agree["targets"]["yes"]["contrasts"]
    (value,) = rate["targets"]["value"]["contrasts"]
    for found, planted in ((yes, P_YES), (value, RATING)):
        assert (found["term"], found["level"], found["reference"]) == ("age", "young", "old")
        assert abs(found["shift"] - planted) < 1e-9 and found["low"] < planted < found["high"], found
        assert found["significant"]
    cli_ok("report", str(run / "score"))
    report = (run / "score" / "report.md").read_text(encoding="utf-8")
    assert "Answer form: yesno (agree), scale (rate)." in report and "## Model openai/stub [rate]" in report


def test_an_effects_design_beside_a_design_of_another_family_stays_refused_at_it(tmp_path: Path) -> None:
    golden = Path(__file__).parents[2] / "fixtures" / "specs" / "golden_positions.spec"
    effects = "\n".join(line for line in SPEC.splitlines()[2:] if not line.startswith(("factor", "  young")))
    spec = golden.read_text(encoding="utf-8") + "\n" + effects.replace("age", "color").replace(
        "reference color = old", "reference color = red") + "\n"
    path = write_tiny(tmp_path, spec, SCENARIOS)
    result = CliRunner().invoke(main, ["check", str(path)])
    assert result.exit_code == 1 and isinstance(result.exception, SystemExit), result.output
    line = spec.splitlines().index("design agree:") + 1
    assert f"tiny.spec:{line}:1: error: designs of one suite must share their analysis: design 'agree' differs " \
           "from 'main'" in result.output, result.output


def test_plan_sizes_each_form_with_its_own_largest_variance(tmp_path: Path) -> None:
    suite = tmp_path / "suite"
    cli_ok("compile", str(write_tiny(tmp_path, SPEC, SCENARIOS)), "-o", str(suite))
    output = cli_ok("plan", str(suite)).output
    # n 120 per arm, design effect 1 + (10 - 1) * 0.1: SE = sqrt(v * 2 / 120 * 1.9) with v = 1/4 for P(yes)
    # and v = (10 - 1)^2 / 4 for a 1-10 rating
    assert "[agree] P(yes): age=young vs old: n 120 vs 120 in 12 clusters, icc 0.100, design effect 1.90, " \
           "SE 0.0890" in output, output
    assert "[rate] mean value: age=young vs old: n 120 vs 120 in 12 clusters, icc 0.100, design effect 1.90, " \
           "SE 0.8008" in output, output
