"""Bundles and exports read back by the libraries they are for; each test skips when its library is not
installed (they are in the `dev` extra; inspect_ai is not, see docs/bundles.md)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from spec_audits.contract.reader import read_suite
from spec_audits.contract.suite_model import SuiteRow
from spec_audits.contract.writer import suite_row, write_suite_folder
from spec_audits.runner.commands.publish.bundle import write_bundle
from spec_audits.runner.commands.publish.export import to_hf, to_inspect
from tests.runner.publish.project import make_project
from tests.support import ROOT


@pytest.fixture
def suite(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return make_project(tmp_path)


def test_mlcroissant_reads_every_record_of_a_bundle(suite: Path) -> None:
    mlc = pytest.importorskip("mlcroissant", reason="mlcroissant is not installed (pip install -e '.[dev]')")
    write_bundle(suite, Path("b"))
    dataset = mlc.Dataset(jsonld="b/croissant.json")
    records = list(dataset.records(record_set="rows"))
    rows = read_suite(suite).rows
    assert [r["rows/id"].decode() for r in records] == [row.id for row in rows]
    assert records[0]["rows/samples"] == 3 and records[0]["rows/cell_n_A"] == rows[0].cell["n_A"]
    assert records[0]["rows/cell_factor"].decode() == rows[0].cell["factor"]


JSON_COLUMNS = ("answers", "decode", "puzzle", "followups", "expect", "meta")


def _expected(row: SuiteRow, columns: list[str]) -> dict[str, Any]:
    """What the hf export should hold for `row`, built from the row itself (not from the exporter)."""
    record = row.model_dump(mode="json") | {f"cell_{key}": value for key, value in row.cell.items()}
    record["messages"] = [{"role": m.role, "content": m.content} for m in row.messages if not m.generate]
    return {name: record.get(name) for name in columns}


def _read_back(dataset: Any) -> list[dict[str, Any]]:
    return [{name: json.loads(value) if name in JSON_COLUMNS and value is not None else value
             for name, value in record.items()} for record in dataset.to_list()]


def _both_loaders(folder: Path) -> list[dict[str, Any]]:
    """The hf export read by load_dataset and by load_from_disk: the same columns, types and records."""
    datasets = pytest.importorskip("datasets", reason="datasets is not installed (pip install -e '.[dev]')")
    by_card = datasets.load_dataset(str(folder), cache_dir="cache")["test"]
    from_disk = datasets.load_from_disk(str(folder))["test"]
    assert by_card.features == from_disk.features and by_card.to_list() == from_disk.to_list()
    return _read_back(from_disk)


def test_both_datasets_loaders_read_every_field_of_the_hf_export(suite: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    rows = read_suite(suite).rows
    to_hf(read_suite(suite), Path("hf"))
    loaded = _both_loaders(Path("hf"))
    columns = list(loaded[0])
    assert columns == ["id", "samples", *(f"cell_{key}" for key in sorted(rows[0].cell)), "answers", "decode",
                       "messages"]
    assert loaded == [_expected(row, columns) for row in rows]


def _varied_rows() -> list[SuiteRow]:
    """Rows with a cell key that is an integer in some rows and text in others, a key absent from one
    cell, meta and a unit on some rows, and a last turn the model writes."""
    bodies = [{"messages": [{"role": "system", "content": "Be brief."}, {"role": "user", "content": f"Q{i}: A or B?"},
                            {"role": "assistant", "generate": True}],
               "samples": i + 1, "cell": {"level": level, "order": "AB"} if i else {"level": level},
               "answers": {"A": "first", "B": "second"}, "decode": {"temperature": 0.5},
               **({"meta": {"source": f"r{i}", "n": i}, "unit": f"u{i // 2}"} if i % 2 == 0 else {})}
              for i, level in enumerate([1, "high", None, 2])]
    return [suite_row(body) for body in bodies]


def test_the_hf_export_types_a_mixed_cell_key_as_text_and_keeps_optional_fields(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    rows = _varied_rows()
    write_suite_folder(Path("s"), rows, suite="varied", spec_file="v.spec", spec_sha256="0" * 64,
                       compiler_version="test", schema_version="1", seed=0, cells={"level": 3, "order": 1})
    to_hf(read_suite(Path("s")), Path("hf"))
    loaded = _both_loaders(Path("hf"))
    columns = list(loaded[0])
    assert columns == ["id", "samples", "cell_level", "cell_order", "answers", "decode", "meta", "unit", "messages"]
    expected = [_expected(row, columns) for row in read_suite(Path("s")).rows]
    for record in expected:  # the column is text: an integer level is written as its digits
        record["cell_level"] = None if record["cell_level"] is None else str(record["cell_level"])
    assert loaded == expected
    assert sorted(r["cell_level"] for r in loaded if r["cell_level"]) == ["1", "2", "high"]


def _export_in_subprocess(suite: Path, out: Path, hash_seed: str) -> dict[str, bytes]:
    code = "import sys; from spec_audits.cli import main; main(sys.argv[1:])"
    env = {**os.environ, "PYTHONHASHSEED": hash_seed, "PYTHONPATH": str(ROOT)}
    subprocess.run([sys.executable, "-c", code, "export", str(suite), "--to", "hf", "-o", str(out)], env=env,
                   check=True, capture_output=True)
    return {p.relative_to(out).as_posix(): p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()}


@pytest.mark.slow
def test_the_hf_export_is_byte_identical_across_runs_and_hash_seeds(suite: Path) -> None:
    pytest.importorskip("datasets", reason="datasets is not installed (pip install -e '.[dev]')")
    first = _export_in_subprocess(suite, Path("a"), "0")
    assert list(first) == ["README.md", "dataset_dict.json", "test/data-00000-of-00001.arrow",
                           "test/dataset_info.json", "test/state.json"]
    assert first == _export_in_subprocess(suite, Path("b"), "12345")


def test_datasets_loads_a_bundle_folder(suite: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    datasets = pytest.importorskip("datasets", reason="datasets is not installed (pip install -e '.[dev]')")
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    write_bundle(suite, Path("b"))
    assert datasets.load_dataset("b", cache_dir="cache")["test"]["id"] == [row.id for row in read_suite(suite).rows]


def test_inspect_ai_reads_the_export_as_samples(suite: Path) -> None:
    inspect_dataset = pytest.importorskip("inspect_ai.dataset", reason="inspect_ai is not installed")
    to_inspect(read_suite(suite), Path("t.jsonl"))
    samples = inspect_dataset.json_dataset("t.jsonl")
    first = samples[0]
    assert first.id == read_suite(suite).rows[0].id and first.target == ""
    assert first.input[0].role == "user" and first.metadata["cell"]["order"] == "AB"


def test_the_exported_task_file_records_the_parsed_answer_on_a_mock_model(suite: Path) -> None:
    inspect_ai = pytest.importorskip("inspect_ai", reason="inspect_ai is not installed")
    from inspect_ai.model import ModelOutput, ModelUsage, get_model

    to_inspect(read_suite(suite), Path("t.jsonl"))
    replies = [ModelOutput.from_content(model="mockllm/model", content=text) for text in ("**Y**", "X or Y?")]
    for reply in replies:
        reply.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)  # else it counts tokens online
    model = get_model("mockllm/model", custom_outputs=replies)
    (log,) = inspect_ai.eval("t.py", model=model, limit=2, epochs=1, log_dir="logs", display="none")
    rows = read_suite(suite).rows
    assert log.status == "success" and log.samples is not None and len(log.samples) == 2
    assert [s.id for s in log.samples] == [rows[0].id, rows[1].id]
    scores = [s.scores["parsed_answer"] for s in log.samples]
    assert [(s.answer, s.value, s.metadata) for s in scores] == [("Y", 1, {"outcome": rows[0].answers["Y"]}),
                                                                (None, 0, {"outcome": None})]
