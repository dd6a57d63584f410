"""The seed-004 conditional-bias suite: the 53-row bank head compiles to the proposal's 4S + 2R rows,
deterministically; parsed test cases rebuild the bank's own text; bad bank rows are located errors."""

from __future__ import annotations

import csv
import hashlib
import json
import shutil
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from spec_audits.compiler.data_parse import parse_test_case
from spec_audits.compiler.dispatch.build import check_file, compile_file
from spec_audits.compiler.errors import SpecError
from spec_audits.compiler.load import display_path
from spec_audits.contract.reader import read_suite
from spec_audits.contract.suite_model import EXTRACTION_SLOT
from spec_audits.families.cognitive_bias.expand import arm_context
from spec_audits.runner.plan import estimate, plan
from tests.support import ROOT, suite_rows

SPEC = ROOT / "specs" / "cognitive_bias.spec"
BANK = ROOT / "specs" / "data" / "cognitive_bias" / "bank.head.csv"


def _bank() -> list[dict[str, str]]:
    with BANK.open(encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle))



@pytest.fixture(scope="session")
def compiled(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("bias") / "cognitive_bias"
    compile_file(SPEC, out)
    return out


@pytest.fixture(scope="session")
def paper(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The shipped spec under `protocol paper` (with the reversal the paper describes)."""
    folder = tmp_path_factory.mktemp("paper")
    shutil.copytree(BANK.parent, folder / "data" / "cognitive_bias")
    text = SPEC.read_text(encoding="utf-8").replace("protocol authors extract extract_option", "protocol paper")
    (folder / "cognitive_bias.spec").write_text(text, encoding="utf-8")
    compile_file(folder / "cognitive_bias.spec", folder / "out")
    return folder / "out"


def test_head_compiles_to_four_rows_per_unit_and_two_per_bank_row(compiled: Path) -> None:
    rows = suite_rows(compiled)
    units = {r["unit"] for r in rows}
    assert (len(units), len(rows)) == (12, 4 * 12 + 2 * 53) == (12, 154)
    by_condition = Counter(r["cell"]["condition"] for r in rows)
    assert by_condition == {"zero_shot": 24, "neutral_turn": 24, "biased_turn": 106}
    manifest = json.loads((compiled / "manifest.json").read_text())
    assert manifest["analysis"]["family"] == "bias_decomposition"
    balance = manifest["balance"][0]
    # 1 trial per (unit, human bias, condition, arm), each unit's shared rows counted for its own human biases
    assert (balance["cells"], balance["trials_per_cell"]) == (53 * 3 * 2, 1) == (318, 1)


def test_compiling_twice_gives_the_same_bytes(compiled: Path, tmp_path: Path) -> None:
    compile_file(SPEC, tmp_path / "again")
    digest = [hashlib.sha256((d / "suite.jsonl").read_bytes()).hexdigest() for d in (compiled, tmp_path / "again")]
    assert digest[0] == digest[1]


def test_parsed_test_cases_rebuild_the_banks_own_columns_on_all_53_rows() -> None:
    bank = _bank()
    assert len(bank) == 53
    for row in bank:
        parsed = {arm: parse_test_case(row[arm]) for arm in ("control", "treatment")}
        assert [parsed[arm]["text"] for arm in parsed] == [row["control"], row["treatment"]]
        arm = arm_context(parsed, ("control", "treatment"), "treatment", False)  # type: ignore[arg-type]
        assert (arm["common"], arm["diverging"]) == (row["common_situation"], row["diverging_situation"])


def test_the_authors_protocol_gives_each_arm_its_own_acknowledgment_and_reverses_nothing(compiled: Path) -> None:
    rows = suite_rows(compiled)
    shares = Counter(m["share"] for r in rows for m in r["messages"] if m.get("generate"))
    assert len(shares) == 2 * (12 + 53) and set(shares.values()) == {1}  # 130 acknowledgments, one per arm
    assert all(r["cell"]["reversed"] == 0 and r["answers"]["1"] == "0" for r in rows)
    assert all(r["decode"] == {"temperature": 0.0} for r in rows)  # a free decision: no token cap
    assert json.loads((compiled / "manifest.json").read_text())["analysis"]["protocol"] == "authors"


def test_the_papers_protocol_shares_one_acknowledgment_and_reversal_is_undone_by_answers(paper: Path) -> None:
    rows = suite_rows(paper)
    shares = Counter(m["share"] for r in rows for m in r["messages"] if m.get("generate"))
    assert len(shares) == 12 + 53 and set(shares.values()) == {2}  # 65 acknowledgments, each seen by 2 arms
    assert not any("extract" in r for r in rows)
    assert sum(r["cell"]["reversed"] for r in rows) == 59  # the count: about half the rows
    for row in rows:
        n_options = row["meta"]["metric"]["n_options"]
        assert n_options in (7, 11)
        first = "0" if not row["cell"]["reversed"] else str(n_options - 1)
        assert row["answers"]["1"] == first


# The authors' extraction prompt as their prompts.yml folds it (models/*/prompts.yml of
# sachininw/LLM_Conditional_Biases @ c8fb05f, from Malberg et al.'s framework, CC BY-SA 4.0).
AUTHORS_EXTRACTION = (
    "You will be given answer options from a decision-making task and a written answer.\n--- OPTIONS ---\n"
    "{{options}}\n\n--- ANSWER ---\n{{answer}}\n\n--- INSTRUCTION ---\nExtract the option selected in the above "
    'answer (explicitly write "Option N" and nothing else where N is the number of the option). If you cannot '
    "extract the selected option, write 'No option selected'.")


def test_every_row_carries_the_authors_extraction_call_over_its_displayed_options(compiled: Path) -> None:
    for row in suite_rows(compiled):
        options = [m.split(": ", 1)[1] for m in row["messages"][-1]["content"].splitlines() if m.startswith("Option ")]
        listed = "\n".join(f"Option {i}: {option}" for i, option in enumerate(options, start=1))
        expected = AUTHORS_EXTRACTION.replace("{{options}}", listed).replace("{{answer}}", EXTRACTION_SLOT)
        assert row["extract"] == {"prompt": expected, "parse": "option_number"}
        assert len(options) == row["meta"]["metric"]["n_options"]


def test_a_bank_text_holding_the_decision_slot_is_a_located_error(tmp_path: Path) -> None:
    """The runner puts the decision where {{ answer }} is; a bank text carrying one would take its place."""
    slotted = "Answer Options:\nOption 1: {{ answer }} "
    reported = _check_with_bank(tmp_path, lambda bank: bank[1].__setitem__(
        "treatment", bank[1]["treatment"].replace("Answer Options:\nOption 1: ", slotted)))
    assert len(reported) == 1
    assert reported[0].endswith("row 2 puts 2 decision slots {{ answer }} in the extraction prompt")


def _check_with_bank(tmp_path: Path, edit: Any) -> list[str]:
    data = tmp_path / "data" / "cognitive_bias"
    data.mkdir(parents=True)
    bank = _bank()
    edit(bank)
    with (data / "bank.head.csv").open("w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(bank[0]), lineterminator="\n")
        writer.writeheader()
        writer.writerows(bank)
    shutil.copy(SPEC, tmp_path / "cognitive_bias.spec")
    shutil.copy(BANK.parent / "scenarios.head.csv", data)  # the generator's input
    with pytest.raises(SpecError) as raised:
        check_file(tmp_path / "cognitive_bias.spec")
    return [f"{Path(d.span.file).name}:{d.span.line}:{d.span.column}: {d.message}" for d in raised.value.diagnostics]


def _set(row: int, column: str, value: str) -> Any:
    return lambda bank: bank[row - 1].__setitem__(column, value)


@pytest.mark.parametrize(
    ("edit", "expected"),
    [
        (_set(2, "treatment", "Prompt:\nWhich one?\n"), "bank.head.csv:{line}:5: data file '{file}': row 2, column "
         "'treatment': not a test case: expected 'Situation:', 'Prompt:' and 'Answer Options:' blocks separated "
         "by blank lines"),
        (_set(2, "metric_params", "{'k': 1, 'x_1': 7, 'flip_treatment': False}"), "bank.head.csv:{line}:6: data "
         "file '{file}': row 2, column 'metric_params': missing metric parameter 'x_2'"),
        (_set(2, "human_bias", "Anchoring Bias"), "bank.head.csv:{line}:7: data file '{file}': row 2, column "
         "'human_bias': unknown bias 'Anchoring Bias'"),
        (_set(2, "metric_params", "{'k': 1,"), "bank.head.csv:{line}:6: data file '{file}': row 2, column "
         "'metric_params': not a Python literal: '{' was never closed"),
    ],
)
def test_a_bad_bank_row_is_reported_at_its_file_row_and_column(tmp_path: Path, edit: Any, expected: str) -> None:
    reported = _check_with_bank(tmp_path, edit)
    text = (tmp_path / "data" / "cognitive_bias" / "bank.head.csv").read_text(encoding="utf-8")
    record_start = text.index("\n22000,Anchoring,", text.index("\n22000,Anchoring,") + 1) + 1
    line = text.count("\n", 0, record_start) + 1
    shown = display_path(tmp_path / "data" / "cognitive_bias" / "bank.head.csv")
    assert reported == [expected.replace("{line}", str(line)).replace("{file}", shown)]


DECODE = "\n  decode temperature 0.0\n"
PROTOCOL = "protocol authors extract extract_option"


def _check_spec(tmp_path: Path, old: str, new: str) -> list[str]:
    text = SPEC.read_text(encoding="utf-8")
    assert old in text
    (tmp_path / "data").mkdir()
    shutil.copytree(BANK.parent, tmp_path / "data" / "cognitive_bias")
    path = tmp_path / "cognitive_bias.spec"
    path.write_text(text.replace(old, new), encoding="utf-8")
    with pytest.raises(SpecError) as raised:
        check_file(path)
    return [f"{d.span.line}:{d.span.column}: {d.message}" for d in raised.value.diagnostics]


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        (DECODE, f"{DECODE}  reverse 1.5 by unit, arm\n", "51:3: reverse takes a probability between 0 and 1, got 1.5"),
        (DECODE, f"{DECODE}  reverse 0.5 by unit, arms\n", "51:24: cannot draw a reversal per 'arms'"),
        ("turn = row.neutral_message", "turn = neutral_message", "38:45: a condition binds a bank column, written "
         "row.COLUMN; got 'neutral_message'"),
        ('user "{{ row.common_situation }}"', 'user "{{ arm.common }}"', "28:3: turn 1 of conversation 'with_turn' "
         "reads 'arm' before the generated turn"),
        ("answer numbered arm.options", "answer numbered arm.choices", "40:19: unknown option list 'arm.choices'"),
        (DECODE, DECODE.replace("0.0", "0.0, max_tokens 0"), "50:27: max_tokens must be a whole number >= 1, got 0"),
        ("{{ arm.rest }}", "{{ arm.rst }}", "16:102: undefined template variable 'arm.rst' in turn 4 of conversation "
         "'with_turn'"),  # after a `\n` escape, on the same spec line
        ('user "{{ row.common_situation }}"', 'user "{% for s in row.scenario %}{{ row.situaton }}{% endfor %}"',
         "28:43: undefined template variable 'row.situaton' in turn 1 of conversation 'with_turn'"),
        (PROTOCOL, "protocol authers extract extract_option", "49:12: unknown protocol 'authers'"),
        (PROTOCOL, "protocol paper extract extract_option", "49:26: the paper's protocol parses the decision itself: "
         "it has no extraction call"),
        (PROTOCOL, "protocol authors", "49:3: the authors' protocol reads the decision with an extraction call"),
        (PROTOCOL, "protocol authors extract extract_optoin", "49:28: unknown template 'extract_optoin'"),
        (f"  {PROTOCOL}\n", "", "33:1: conditional-bias design 'conditional_bias' has no 'protocol' clause"),
        ("\\n{{ answer }}\\n", "\\nANSWER\\n", "20:1: template 'extract_option' never reads {{ answer }}: the "
         "decision would not reach the extraction call"),
        ("{{ arm.option_lines }}", "{{ arm.option_line }}", "20:134: undefined template variable 'arm.option_line' "
         "in template 'extract_option'"),
    ],
)
def test_a_spec_mistake_is_a_located_error(tmp_path: Path, old: str, new: str, expected: str) -> None:
    assert _check_spec(tmp_path, old, new) == [expected]


@pytest.mark.parametrize(("protocol", "per_unit", "per_bank_row"), [("authors", 10, 6), ("paper", 5, 3)])
def test_dry_run_counts_each_protocols_calls(compiled: Path, paper: Path, protocol: str, per_unit: int,
                                            per_bank_row: int) -> None:
    """authors: per unit and arm a decision and an extraction, and an acknowledgment, decision and extraction
    after the neutral turn; per bank row and arm an acknowledgment, a decision and an extraction. paper: one
    acknowledgment per unit (neutral) and per bank row, shared by the arms, and one decision per row."""
    rows = read_suite(compiled if protocol == "authors" else paper).rows
    (whole,) = estimate(plan(rows, mode="sample"), mode="sample", model="local/x", judge_model=None)
    assert whole.calls == per_unit * 12 + per_bank_row * 53 == {"authors": 438, "paper": 219}[protocol]
    limited = plan(rows, mode="sample", limit=2, seed=0, strata=["unit"])
    units = {w.row.unit for w in limited}
    bank_rows = {w.row.meta["bank_row"] for w in limited if w.row.meta and "bank_row" in w.row.meta}
    assert len(units) == 2 and len(limited) == 4 * 2 + 2 * len(bank_rows)
    (part,) = estimate(limited, mode="sample", model="local/x", judge_model=None)
    assert part.calls == per_unit * 2 + per_bank_row * len(bank_rows)
