"""Two models scored together on one effects suite: their paired differences recover a planted difference
between them (and call the contrasts they share tied), and the report shows them as a table and a plot;
`spec plan` sizes the suite from one of them as its pilot."""

from __future__ import annotations

import csv
import hashlib
import json
import math
from pathlib import Path

import pytest
from click.testing import CliRunner

from spec_audits.cli import main
from tests.families.effects import SPEC, write_tiny
from tests.families.effects.test_planted import SCENARIOS, PlantedModel

SHIFTS = {"openai/steered": {"young": 0.2, "middle-aged": 0.0, "old": -0.15},
          "openai/flat": {"young": 0.2, "middle-aged": 0.0, "old": 0.0}}


class TwoModels(PlantedModel):
    """P(yes) = 0.5 + the model's planted shift of the age in the prompt + noise fixed by prompt and model."""

    def completion(self, body: dict) -> dict:
        prompt, model = body["messages"][-1]["content"], body["model"]
        age = next(word for word in SHIFTS[f"openai/{model}"] if f"a {word} " in prompt)
        noise = (hashlib.sha256((model + prompt).encode()).digest()[0] / 255 - 0.5) * 0.16
        p_yes = 0.5 + SHIFTS[f"openai/{model}"][age] + noise
        top = [{"token": "yes", "logprob": math.log(p_yes)}, {"token": "no", "logprob": math.log(1 - p_yes)}]
        content = "yes" if p_yes >= 0.5 else "no"
        choice = {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": content},
                  "logprobs": {"content": [{"token": content, "logprob": math.log(max(p_yes, 1 - p_yes)),
                                            "top_logprobs": top}]}}
        return {"id": "stub", "object": "chat.completion", "created": 0, "model": model, "choices": [choice],
                "usage": {"prompt_tokens": 10, "completion_tokens": 1, "total_tokens": 11}}


def _spec(*args: str) -> str:
    result = CliRunner().invoke(main, list(args))
    assert result.exit_code == 0 and result.exception is None, result.output
    return result.output


@pytest.fixture(scope="session")
def study(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("compare")
    spec = write_tiny(folder, SPEC.replace("  answer yesno\n", "  answer yesno\n  mode logprob\n"), SCENARIOS)
    _spec("compile", str(spec), "-o", str(folder / "suite"))
    server = TwoModels()
    api_base = server.start()
    try:
        _spec("run", str(folder / "suite"), "--model", "openai/steered", "--model", "openai/flat",
              "--api-base", api_base, "--out", str(folder / "study"), "--no-progress")
    finally:
        server.stop()
    _spec("score", str(folder / "study"))
    return folder


def test_paired_differences_recover_the_planted_difference(study: Path) -> None:
    summary = json.loads((study / "study" / "score" / "summary.json").read_text())
    rows = {(r["statistic"], r["model_a"], r["model_b"]): r for r in summary["comparisons"]["rows"]}
    old = rows[("P(yes): age=old vs middle", "openai/steered", "openai/flat")]
    young = rows[("P(yes): age=young vs middle", "openai/steered", "openai/flat")]
    assert old["low"] < -0.15 < old["high"] and old["significant"] and not old["tied"], old
    assert young["low"] < 0 < young["high"] and young["tied"], young
    assert ["openai/steered", "openai/flat"] in summary["comparisons"]["ties"]["P(yes): age=young vs middle"]
    with (study / "study" / "score" / "comparisons.csv").open() as handle:
        assert len(list(csv.DictReader(handle))) == len(rows) == 4  # 3 contrasts (2 ages, 1 gender) + fair


def test_the_report_shows_the_comparisons(study: Path) -> None:
    _spec("report", str(study / "study" / "score"))
    report = (study / "study" / "score" / "report.md").read_text()
    assert "## Paired model comparisons" in report
    assert "| P(yes): age=old vs middle-aged (middle) | openai/steered | openai/flat |" in report  # levels' text
    assert "paired intervals; red: significant after BH-FDR, blue: not." in report  # one is red: the legend says so
    assert (study / "study" / "score" / "plots" / "model_comparisons.png").is_file()


def test_plan_with_a_pilot_reads_its_variances(study: Path) -> None:
    output = _spec("plan", str(study / "suite"), "--pilot", str(study / "study" / "steered"), "--effect", "0.1")
    assert f"variances: pilot {study / 'study' / 'steered'} (" in output
    assert "P(yes): age=old vs middle: n 32 vs 32 in 8 clusters" in output
    assert "more scenarios: x" in output
    assert "more samples per cell: none to add (logprob mode reads exact probabilities)" in output
