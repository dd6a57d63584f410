"""Bundles and exports read back by the libraries they are for; each test skips when its library is not
installed (they are in the `dev` extra; inspect_ai is not, see docs/bundles.md)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from runner.contract import read_suite
from runner.publish.bundle import write_bundle
from runner.publish.export import to_hf, to_inspect
from tests.runner.publish.project import make_project


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


def test_datasets_loads_the_hf_export_and_the_bundle(suite: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    datasets = pytest.importorskip("datasets", reason="datasets is not installed (pip install -e '.[dev]')")
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    rows = read_suite(suite).rows
    to_hf(read_suite(suite), Path("hf"))
    loaded = datasets.load_dataset("hf", cache_dir="cache")["test"]
    assert loaded["id"] == [row.id for row in rows]
    assert loaded[0]["messages"] == [m.model_dump(exclude_none=True) for m in rows[0].messages]
    assert json.loads(loaded[0]["answers"]) == rows[0].answers
    write_bundle(suite, Path("b"))
    assert datasets.load_dataset("b", cache_dir="cache")["test"]["id"] == [row.id for row in rows]


def test_inspect_ai_reads_the_export_as_samples(suite: Path) -> None:
    inspect_dataset = pytest.importorskip("inspect_ai.dataset", reason="inspect_ai is not installed")
    to_inspect(read_suite(suite), Path("t.jsonl"))
    samples = inspect_dataset.json_dataset("t.jsonl")
    first = samples[0]
    assert first.id == read_suite(suite).rows[0].id and first.target == ["X", "Y"]
    assert first.input[0].role == "user" and first.metadata["cell"]["order"] == "AB"


def test_an_inspect_task_runs_one_exported_sample_on_a_mock_model(suite: Path) -> None:
    inspect_ai = pytest.importorskip("inspect_ai", reason="inspect_ai is not installed")
    from inspect_ai.dataset import json_dataset
    from inspect_ai.model import ModelOutput, ModelUsage, get_model
    from inspect_ai.scorer import includes
    from inspect_ai.solver import generate

    to_inspect(read_suite(suite), Path("t.jsonl"))
    reply = ModelOutput.from_content(model="mockllm/model", content="X")
    reply.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)  # else it counts tokens online
    model = get_model("mockllm/model", custom_outputs=[reply])
    task = inspect_ai.Task(dataset=json_dataset("t.jsonl"), solver=generate(), scorer=includes())
    (log,) = inspect_ai.eval(task, model=model, limit=1, log_dir="logs", display="none")
    first = read_suite(suite).rows[0]
    assert log.status == "success" and log.samples is not None and len(log.samples) == 1
    assert log.samples[0].id == first.id and log.samples[0].metadata["cell"] == first.cell
    assert log.samples[0].output.completion == "X"
    assert log.samples[0].scores["includes"].value == "C"  # the reply holds a valid answer
