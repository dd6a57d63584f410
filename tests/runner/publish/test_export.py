"""`spec export`: each format carries every row's chat, answers, decode settings and cell."""

from __future__ import annotations

import ast
import csv
import json
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from spec_audits.contract.reader import read_suite
from spec_audits.contract.writer import write_suite_folder
from spec_audits.runner.commands.publish.cli import export
from tests.runner.publish.project import make_project
from tests.support import forced_choice_rows


@pytest.fixture
def suite(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return make_project(tmp_path)


def _export(suite: Path, fmt: str, out: str) -> Path:
    provider = ["--provider", "openai:chat:gpt-4o-mini"] if fmt == "promptfoo" else []
    result = CliRunner().invoke(export, [str(suite), "--to", fmt, "-o", out, *provider])
    assert result.exit_code == 0 and result.exception is None, result.output
    assert result.output == f"exported 81 rows of golden_oneorder for {fmt} -> {out}\n"
    return Path(out)


def test_inspect_samples_carry_messages_and_the_cell_and_a_task_file_beside_them(suite: Path) -> None:
    rows = read_suite(suite).rows
    samples = [json.loads(line) for line in _export(suite, "inspect", "t.jsonl").read_text().splitlines()]
    assert [s["id"] for s in samples] == [r.id for r in rows]
    first, row = samples[0], rows[0]
    assert first["input"] == [m.model_dump(exclude_none=True) for m in row.messages]
    assert "target" not in first  # the answer is read by spec's parser, not checked against every valid one
    assert first["metadata"] == {"cell": row.cell, "answers": row.answers, "samples": 3, "decode": row.decode}
    task = Path("t.py").read_text()
    assert 'DATASET = Path(__file__).with_name("t.jsonl")' in task and "epochs=3" in task
    assert 'inspect eval "t.py" --model PROVIDER/MODEL' in task


def test_promptfoo_folder_names_the_provider_with_the_decode_settings_and_parses_the_reply(suite: Path) -> None:
    out = _export(suite, "promptfoo", "pf")
    config = yaml.safe_load((out / "promptfooconfig.yaml").read_text())
    assert config == {"description": "One display order", "prompts": ["file://prompt.json"],
                      "providers": [{"id": "openai:chat:gpt-4o-mini", "config": {"temperature": 1}}],
                      "tests": "file://tests.yaml", "evaluateOptions": {"repeat": 3}}
    assert (out / "prompt.json").read_text() == "{{ messages | dump }}\n"
    tests = yaml.safe_load((out / "tests.yaml").read_text())
    row = read_suite(suite).rows[0]
    assert len(tests) == 81 and tests[0]["description"] == row.id
    assert tests[0]["vars"] == {"messages": [m.model_dump(exclude_none=True) for m in row.messages], **row.cell,
                                "spec_answers": {"X": row.answers["X"], "Y": row.answers["Y"]}}
    assert tests[0]["assert"] == [{"type": "python", "value": "file://assert_answer.py"}]
    namespace: dict[str, Any] = {}
    exec((out / "assert_answer.py").read_text(), namespace)  # the assertion promptfoo runs, run here
    context = {"vars": tests[0]["vars"]}
    assert namespace["get_assert"]("**Y**", context) == {"pass": True, "score": 1,
                                                        "reason": f"answer Y = {row.answers['Y']}"}
    echo = json.dumps(tests[0]["vars"]["messages"])  # promptfoo's echo provider: the prompt, naming X and Y
    assert namespace["get_assert"](echo, context)["pass"] is False


def test_promptfoo_needs_a_provider_and_no_other_format_takes_one(suite: Path) -> None:
    for args in (["--to", "promptfoo"], ["--to", "csv", "--provider", "openai:chat:x"]):
        result = CliRunner().invoke(export, [str(suite), *args, "-o", "x"])
        assert result.exit_code == 2 and isinstance(result.exception, SystemExit) and not Path("x").exists()
        assert result.output.endswith("Error: --provider ID goes with --to promptfoo, and only there (e.g. "
                                      "--provider openai:chat:gpt-4o-mini)\n")


def test_csv_has_one_column_per_cell_key(suite: Path) -> None:
    with _export(suite, "csv", "t.csv").open(newline="") as handle:
        lines = list(csv.DictReader(handle))
    row = read_suite(suite).rows[0]
    assert list(lines[0]) == ["id", "samples", *(f"cell_{k}" for k in sorted(row.cell)), "answers", "decode",
                              "messages"]
    assert lines[0]["id"] == row.id and lines[0]["cell_order"] == "AB" and json.loads(lines[0]["answers"]) == {
        "X": row.answers["X"], "Y": row.answers["Y"]}
    assert len(lines) == 81


def test_hf_folder_is_a_saved_dataset_dict_whose_card_names_its_arrow_file(suite: Path) -> None:
    pytest.importorskip("datasets", reason="datasets is not installed (pip install -e '.[dev]')")
    out = _export(suite, "hf", "hf")
    assert sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file()) == [
        "README.md", "dataset_dict.json", "test/data-00000-of-00001.arrow", "test/dataset_info.json",
        "test/state.json"]
    assert json.loads((out / "dataset_dict.json").read_text()) == {"splits": ["test"]}
    card = (out / "README.md").read_text()
    assert card.startswith('---\npretty_name: "One display order"\nsize_categories:\n- n<1K\n')
    assert "  - split: test\n    path: test/data-00000-of-00001.arrow\n---\n" in card
    info = json.loads((out / "test" / "dataset_info.json").read_text())
    assert info["description"] == "spec suite golden_oneorder" and info["features"]["cell_n_A"] == {
        "dtype": "int64", "_type": "Value"}


def test_hf_without_the_datasets_library_says_what_to_install(suite: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "datasets", None)  # `import datasets` now raises ImportError
    result = CliRunner().invoke(export, [str(suite), "--to", "hf", "-o", "hf"])
    assert result.exit_code == 1 and not Path("hf").exists()
    assert result.output == ("Error: `spec export --to hf` writes the folder with the Hugging Face `datasets` "
                             "library, which is not installed; install it with `pip install 'datasets>=3.0'`\n")


def test_a_turn_the_model_writes_mid_chat_cannot_be_exported(tmp_path: Path) -> None:
    (row,) = forced_choice_rows(1, 1, messages=[{"role": "user", "content": "Hi"},
                                                {"role": "assistant", "generate": True},
                                                {"role": "user", "content": "A or B?"}])
    write_suite_folder(tmp_path / "s", [row], suite="s", spec_file="s.spec", spec_sha256="0" * 64,
                       compiler_version="test", schema_version="1", seed=0, cells={"influence": 1, "order": 1})
    result = CliRunner().invoke(export, [str(tmp_path / "s"), "--to", "inspect", "-o", str(tmp_path / "t.jsonl")])
    assert result.exit_code == 1 and result.exception is not None
    assert result.output == (f"Error: {tmp_path}/s/suite.jsonl: row {row.id}: turn 2 is written by the model at "
                             "run time, which inspect_ai datasets cannot hold; run this suite with `spec run`\n")


def test_a_suite_name_cannot_become_code_in_the_exported_task_file(tmp_path: Path) -> None:
    hostile = 'x"""\nimport os; os.system("echo pwned")\n"""'
    write_suite_folder(tmp_path / "s", forced_choice_rows(2, 1), suite=hostile, spec_file="s.spec",
                       spec_sha256="0" * 64, compiler_version="test", schema_version="1", seed=0,
                       cells={"influence": 1, "order": 2})
    result = CliRunner().invoke(export, [str(tmp_path / "s"), "--to", "inspect", "-o", str(tmp_path / 'a"""b.jsonl')])
    assert result.exit_code == 0 and result.exception is None, result.output
    tree = ast.parse((tmp_path / 'a"""b.py').read_text())
    imported = {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import | ast.ImportFrom)
                for alias in node.names}
    assert "os" not in imported and not any(isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "system"
                                            for node in ast.walk(tree))
    docstring = ast.get_docstring(tree) or ""  # the name stays inside it, escapes and all
    assert docstring.startswith(f'inspect_ai task for the spec suite "{hostile}" (written')
    assert f"name={json.dumps(hostile)})" in (tmp_path / 'a"""b.py').read_text()
