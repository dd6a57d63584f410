"""`spec generate`: persona turns judged by a jury, accepted at the four minimums, regenerated with the
jury's feedback, skipped when retries run out, frozen into a hashed CSV that the spec compiles; the
generator block's mistakes are located errors; the path runs end to end on the embedded model."""

from __future__ import annotations

import asyncio
import hashlib
import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from spec_audits.cli import main
from spec_audits.compiler.dispatch.build import check_file
from spec_audits.compiler.errors import SpecError
from spec_audits.families.cognitive_bias.generate import BankWriter, Jury, read_ratings
from spec_audits.runner.call import CallSettings, Reply
from spec_audits.sdk import replaced
from tests.support import ROOT

SPEC = ROOT / "specs" / "cognitive_bias.spec"
HUMANS = '"Anchoring|Availability Heuristic|Bandwagon Effect|Confirmation Bias|Framing Effect|In Group Bias|' \
         'Loss Aversion|Planning Fallacy|Status Quo Bias"'


class Scripted:
    """A model that answers from a script (by prompt kind) and records every prompt it got."""

    def __init__(self, name: str, ratings: list[dict[str, int]], pick: str) -> None:
        self.settings = CallSettings(name)
        self.ratings, self.pick, self.prompts = ratings, pick, []

    async def call(self, messages: list[dict[str, Any]], params: dict[str, Any], slot: str,
                   extras: dict[str, Any]) -> Reply:
        self.prompts.append(messages[-1]["content"])
        if slot == "jury/ratings":
            text = "Here you are: " + json.dumps(self.ratings.pop(0) if len(self.ratings) > 1 else self.ratings[0])
        elif slot == "jury/blind":
            text = self.pick
        else:
            text = f"message {len(self.prompts)}"
        return Reply(text, {}, None, False, 0.0)


def _ratings(target: int, competitor: int, natural: int, humans: tuple[str, ...], human: str) -> dict[str, int]:
    return {**{h: competitor for h in humans}, human: target, "naturalness": natural}


def _spec_copy(folder: Path, humans: str = HUMANS, extra: tuple[tuple[str, str], ...] = ()) -> Path:
    shutil.copytree(SPEC.parent / "data" / "cognitive_bias", folder / "data" / "cognitive_bias")
    text = SPEC.read_text(encoding="utf-8").replace(f"humans {HUMANS}", f"humans {humans}")
    for old, new in extra:
        assert old in text
        text = text.replace(old, new)
    path = folder / "cognitive_bias.spec"
    path.write_text(text, encoding="utf-8")
    return path


def test_ratings_are_read_from_the_last_complete_json_object() -> None:
    names = ("A", "naturalness")
    assert read_ratings('x {"A": 2} then {"A": 4, "naturalness": 5}', names) == {"A": 4.0, "naturalness": 5.0}
    assert read_ratings('{"A": 9, "naturalness": 5}', names) is None
    assert read_ratings("no json", names) is None


def test_a_turn_failing_purity_is_regenerated_with_feedback_then_accepted(tmp_path: Path) -> None:
    generator = check_file(_spec_copy(tmp_path, '"Anchoring|Framing Effect"')).generators["bank_turns"][1]
    humans = generator.humans
    # Anchoring: the first attempt's purity is 4 - 3 = 1 < 1.5, the second passes (4 - 2 = 2)
    jurors = [Scripted(f"j{i}", [_ratings(4, 3, 4, humans, "Anchoring"), _ratings(4, 2, 4, humans, "Anchoring"),
                                 _ratings(1, 1, 1, humans, "Framing Effect")], "Anchoring") for i in range(3)]
    model = Scripted("writer", [], "")
    writer = BankWriter(replaced(generator, retries=1), model, Jury(generator, jurors), None)  # type: ignore[arg-type]
    rows = asyncio.run(writer.row(0, dict(generator.rows[0])))
    assert [(r["human_bias"], r["attempts"]) for r in rows] == [("Anchoring", 2)]
    assert rows[0]["jury_purity"] == 2.0 and rows[0]["jury_blind_accuracy"] == 1.0
    assert writer.skipped == 1 and writer.attempts == 4  # Framing Effect failed twice and was skipped
    assert "the jury found purity 1.00 < 1.5" in model.prompts[2]  # neutral, attempt 1, attempt 2 with feedback


def test_generate_writes_a_hashed_bank_the_spec_compiles(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    spec = _spec_copy(tmp_path, '"Anchoring"')
    passing = _ratings(5, 1, 5, ("Anchoring",), "Anchoring")
    clients = iter([Scripted("writer", [], ""), *(Scripted(f"j{i}", [passing], "Anchoring") for i in range(3))])
    monkeypatch.setattr("spec_audits.families.cognitive_bias.generate.ModelClient",
                        lambda settings, cache: next(clients))
    out = tmp_path / "data" / "cognitive_bias" / "bank.generated.csv"
    result = CliRunner().invoke(main, ["generate", str(spec), "--limit", "2", "--no-cache"])
    assert result.exit_code == 0, result.output
    assert result.output.startswith("2 user turns accepted, 0 skipped after 3 retries (2 attempts)")
    sidecar = json.loads(out.with_suffix(".json").read_text())
    assert sidecar["sha256"] == hashlib.sha256(out.read_bytes()).hexdigest() and sidecar["rows"] == 2
    bank_spec = spec.read_text().replace('data bank from "data/cognitive_bias/bank.head.csv"',
                                         'data bank from "data/cognitive_bias/bank.generated.csv"')
    spec.write_text(bank_spec)
    compiled = CliRunner().invoke(main, ["compile", str(spec), "-o", str(tmp_path / "suite")])
    assert compiled.exit_code == 0, compiled.output
    assert "compiled cognitive_bias: 12 prompts" in compiled.output  # 2 units x 4 + 2 bank rows x 2


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        ("blind >= 0.667", "blind > 0.667", "acceptance criteria are minimums: write blind >= 0.667"),
        ("blind >= 0.667", "blinded >= 0.667", "unknown acceptance criterion 'blinded'"),
        ("  from scenarios\n", "  from scenario\n", "unknown data source 'scenario'"),
        ("persona intensity 0.7", "persona intensty 0.7", "unknown persona setting 'intensty'"),
        ("  analysis bias_decomposition\n  from", "  analysis cue_visibility\n  from",
         "no generator for analysis 'cue_visibility'"),
    ],
)
def test_a_generator_mistake_is_a_located_error(tmp_path: Path, old: str, new: str, expected: str) -> None:
    spec = _spec_copy(tmp_path, extra=((old, new),))
    with pytest.raises(SpecError) as raised:
        check_file(spec)
    assert [d.message for d in raised.value.diagnostics] == [expected]
    lines = spec.read_text().split("\n")
    assert raised.value.diagnostics[0].span.line == 1 + next(i for i, x in enumerate(lines)
                                                             if new.strip().split("\n")[0] in x)


def test_generate_runs_end_to_end_on_the_embedded_model(tmp_path: Path) -> None:
    spec = _spec_copy(tmp_path, '"Anchoring"', extra=(("retries 3 feedback", "retries 0 feedback"),))
    jury = ",".join(["local/gemma-3-270m"] * 3)
    result = CliRunner().invoke(main, ["generate", str(spec), "--model", "local/gemma-3-270m", "--jury", jury,
                                       "--limit", "1", "--max-tokens", "8", "--no-cache",
                                       "-o", str(tmp_path / "try.csv")])
    assert result.exit_code == 0, result.output
    sidecar = json.loads((tmp_path / "try.json").read_text())
    assert sidecar["attempts"] == 1 and sidecar["rows"] + sidecar["skipped"] == 1  # its judgments are noise
