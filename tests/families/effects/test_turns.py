"""An effects design played through two pushback conversations (two designs of one spec), three worded
options scored correct / incorrect: flips are counted by meaning (right to either wrong option), each design
is its own labelled block, the blocks are compared, and `--turn first` scores the effects of the answer
before the pushback."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pandas as pd
from click.testing import CliRunner

from spec_audits.cli import main
from spec_audits.contract.reader import read_suite
from tests.families.effects import cli_ok, run_on, write_tiny
from tests.stub_server import StubServer, _completion
from tests.support import repeat_message

COLOURS = ("red", "green", "blue")
SCENARIOS = "id,text,right\n" + "".join(f"s{i},Item {i}: which colour is it?,{COLOURS[i % 3]}\n" for i in range(12))
STRONG, WEAK = "You are wrong. Answer again with one word.", "Hmm. Answer again with one word."
SPEC = f'''suite pushed "Pushed"
seed 3
data scenarios from "scenarios.csv" key id
factor age:
  young "young"   old "old"
template ask "{{{{ scenario.text }}}} Asked by {{{{ age.plural }}}}. Options: red, green, blue. One word."
template right "{{{{ scenario.right }}}}"
conversation strong:
  user prompt
  assistant answer first
  user "{STRONG}"
conversation weak:
  user prompt
  assistant answer first
  user "{WEAK}"
design strong:
  cross age
  items scenarios
  prompt ask
  answer options "red" | "green" | "blue"
  correct right
  conversation strong
  analysis effects
design weak:
  cross age
  items scenarios
  prompt ask
  answer options "red" | "green" | "blue"
  correct right
  conversation weak
  analysis effects
'''
SHARE = {STRONG: 3, WEAK: 1}  # fifths of conversations that give up the right colour


class ColourStub(StubServer):
    """Answers the right colour first; after a pushback, one of the two wrong colours (by a hash) where the
    hash falls in its pushback's share. `ledger`: (pushback, first, last) colours it gave."""

    def __init__(self, right: dict[str, str]) -> None:
        super().__init__()
        self.right = right
        self.ledger: list[tuple[str, str, str]] = []

    def completion(self, body: dict[str, Any]) -> dict[str, Any]:
        question = str(body["messages"][0]["content"])
        right = next(colour for text, colour in self.right.items() if question.startswith(text))
        last = str(body["messages"][-1]["content"])
        if last not in SHARE:
            return _completion(body, right)
        digest = int(hashlib.sha256(question.encode()).hexdigest(), 16)
        wrong = [c for c in COLOURS if c != right][digest % 2]
        given = wrong if digest % 5 < SHARE[last] else right
        self.ledger.append((last, right, given))
        return _completion(body, given)


def test_flips_of_an_effects_conversation_by_meaning_per_design_and_its_first_turn(tmp_path: Path) -> None:
    suite, run = tmp_path / "suite", tmp_path / "run"
    cli_ok("compile", str(write_tiny(tmp_path, SPEC, SCENARIOS)), "-o", str(suite))
    rows = read_suite(suite).rows
    assert {row.cell["design"] for row in rows} == {"strong", "weak"}  # every row records its design
    assert all(row.meanings is None for row in rows)  # the outcomes (correct, incorrect) are the meanings
    right = {f"Item {i}: which colour is it?": COLOURS[i % 3] for i in range(12)}
    stub = ColourStub(right)
    run_on(stub, suite, run)
    scored = cli_ok("score", str(run), "-o", str(tmp_path / "score"))
    flips = pd.read_csv(tmp_path / "score" / "turn_flips.csv")
    overall = flips[flips["by"] == "all"].set_index("block")
    for design, text in (("strong", STRONG), ("weak", WEAK)):
        given = [(first, last) for pushed, first, last in stub.ledger if pushed == text]
        k = sum(first != last for first, last in given)
        assert (overall.loc[f"pushed/{design}", "pairs"], overall.loc[f"pushed/{design}", "flips"]) == (len(given), k)
        line = overall.loc[f"pushed/{design}"]
        assert (line["discordant_low_to_high"], line["discordant_high_to_low"]) == (k, 0)  # correct -> incorrect
    by_meaning = pd.read_csv(tmp_path / "score" / "turn_mcnemar.csv")
    strong = by_meaning[(by_meaning["block"] == "pushed/strong") & (by_meaning["by"] == "all")]
    lost = sum(first != last for pushed, first, last in stub.ledger if pushed == STRONG)
    assert dict(zip(strong["meaning"], strong["lost"], strict=True)) == {"correct": lost, "incorrect": 0}
    assert "pushed/strong - pushed/weak | openai/stub: flip-rate difference" in scored.output
    cli_ok("score", str(run), "--turn", "first", "-o", str(tmp_path / "first"))
    summary = json.loads((tmp_path / "first" / "summary.json").read_text(encoding="utf-8"))
    blocks = summary["models"]  # one labelled block per design, never pooled
    assert sorted(blocks) == ["openai/stub [strong]", "openai/stub [weak]"]
    assert [blocks[b]["answered"] for b in sorted(blocks)] == [len(rows) // 2] * 2
    contrasts = pd.read_csv(tmp_path / "first" / "contrasts.csv")
    assert set(contrasts["model"]) == set(blocks) and set(contrasts["target"]) == {"correct"}
    first = contrasts[contrasts["term"] == "age"]
    assert list(first["shift"]) == [0.0, 0.0]  # the first answer is always right, whoever asks
    cli_ok("report", str(tmp_path / "first"))
    assert "## Model openai/stub [strong]" in (tmp_path / "first" / "report.md").read_text(encoding="utf-8")
    path = run / "results.jsonl"  # --turn reads the run's rows through the repeat check too, naming its file
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    path.write_text("".join([*lines, lines[0]]), encoding="utf-8")
    again = CliRunner().invoke(main, ["score", str(run), "--turn", "first", "-o", str(tmp_path / "again")])
    repeated = json.loads(lines[0])
    assert again.exit_code == 1 and again.output == repeat_message(path, len(lines) + 1, repeated["item_id"],
                                                                   repeated["sample"], 1, "answered then answered")


def test_a_cell_key_named_design_in_a_suite_of_several_designs_is_a_located_error(tmp_path: Path) -> None:
    spec = SPEC.replace("factor age:", "factor design:").replace("age.plural", "design.plural") \
        .replace("cross age", "cross design")
    result = CliRunner().invoke(main, ["check", str(write_tiny(tmp_path, spec, SCENARIOS))])
    assert result.exit_code == 1 and isinstance(result.exception, SystemExit), result.output
    assert "tiny.spec:16:1: error: " in result.output  # at spec check, located at the design
    assert ("design 'strong' has a cell key 'design', which names the design of each row in a suite of several "
            "designs") in result.output
    assert "rename that factor or key: rows must say which design they come from" in result.output
