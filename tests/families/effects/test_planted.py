"""End to end on the loopback stub: a model whose P(yes) depends on the person's age by a planted amount is
compiled for, run in logprob mode, scored (drawing nothing) and reported (drawing its plots), and the contrasts
recover the planted shifts within their intervals; --limit spreads a subset evenly over every factor's levels."""

from __future__ import annotations

import hashlib
import json
import math
from collections import Counter
from pathlib import Path

from click.testing import CliRunner

from spec_audits.cli import main
from spec_audits.contract.reader import read_suite
from spec_audits.runner.plan import plan
from tests.families.effects import SPEC, write_tiny
from tests.stub_server import StubServer
from tests.support import imported_after

PLANTED = {"young": 0.2, "middle-aged": 0.0, "old": -0.15}  # shift in P(yes) against the reference, middle
SCENARIOS = "id,text\n" + "".join(f"s{i},Approve request {i}?\n" for i in range(8))


class PlantedModel(StubServer):
    """P(yes) = 0.5 + the planted shift of the age named in the prompt + noise fixed by the prompt's hash."""

    def completion(self, body: dict) -> dict:
        prompt = body["messages"][-1]["content"]
        age = next(word for word in PLANTED if f"a {word} " in prompt)
        noise = (hashlib.sha256(prompt.encode()).digest()[0] / 255 - 0.5) * 0.16
        p_yes = 0.5 + PLANTED[age] + noise
        top = [{"token": "yes", "logprob": math.log(p_yes)}, {"token": "no", "logprob": math.log(1 - p_yes)}]
        content = "yes" if p_yes >= 0.5 else "no"
        choice = {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": content},
                  "logprobs": {"content": [{"token": content, "logprob": math.log(max(p_yes, 1 - p_yes)),
                                            "top_logprobs": top}]}}
        return {"id": "stub", "object": "chat.completion", "created": 0, "model": body.get("model", "stub"),
                "choices": [choice], "usage": {"prompt_tokens": 10, "completion_tokens": 1, "total_tokens": 11}}


def _spec(*args: str) -> None:
    result = CliRunner().invoke(main, list(args))
    assert result.exit_code == 0 and result.exception is None, result.output


def test_planted_age_shifts_are_recovered_end_to_end(tmp_path: Path) -> None:
    spec = write_tiny(tmp_path, SPEC.replace("  answer yesno\n", "  answer yesno\n  mode logprob\n"), SCENARIOS)
    suite, run = tmp_path / "suite", tmp_path / "run"
    _spec("compile", str(spec), "-o", str(suite))
    server = PlantedModel()
    api_base = server.start()
    try:
        for model, out in (("openai/planted", run), ("openai/twin", tmp_path / "twin")):
            _spec("run", str(suite), "--model", model, "--api-base", api_base, "--out", str(out), "--no-progress")
    finally:
        server.stop()
    # several models together; the headline it prints draws no plot, so matplotlib is not even imported
    assert "matplotlib" not in imported_after("score", str(run), str(tmp_path / "twin"), "-o", str(run / "score"))
    assert not list((run / "score").rglob("*.png"))
    _spec("report", str(run / "score"))
    summary = json.loads((run / "score" / "summary.json").read_text())
    assert sorted(summary["models"]) == ["openai/planted", "openai/twin"]
    found = summary["models"]["openai/planted"]["targets"]["yes"]
    ages = {c["level"]: c for c in found["contrasts"] if c["term"] == "age"}
    for level, planted in (("young", 0.2), ("old", -0.15)):
        assert ages[level]["low"] < planted < ages[level]["high"] and ages[level]["significant"], ages[level]
    assert found["regression"]["model"] == "linear on logit P, clustered by scenario"
    report = (run / "score" / "report.md").read_text()
    assert "### Shifts in P(yes) against the reference" in report
    assert (run / "score" / "plots" / "forest_openai_planted_yes.png").is_file()
    assert (run / "score" / "plots" / "heatmap_openai_planted_yes.png").is_file()
    assert (run / "score" / "plots" / "model_comparisons.png").is_file()


def test_limit_spreads_a_subset_evenly_over_every_factor(tmp_path: Path) -> None:
    spec = SPEC.replace("factor gender:\n  man \"man\"   woman \"woman\"",
                        "factor gender:\n  man \"man\"   woman \"woman\"   other \"person\"")
    suite = tmp_path / "suite"
    _spec("compile", str(write_tiny(tmp_path, spec, SCENARIOS)), "-o", str(suite))
    loaded = read_suite(suite)
    assert loaded.strata == ["age", "gender", "condition"]  # 18 strata, 8 rows each
    picked = plan(loaded.rows, mode="sample", limit=12, seed=5, strata=loaded.strata)
    for key, levels in (("age", 3), ("gender", 3), ("condition", 2)):
        assert sorted(Counter(w.row.cell[key] for w in picked).values()) == [12 // levels] * levels, key
