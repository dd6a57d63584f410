"""Study folders: one run folder per model x reasoning setting, listed in study.json."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from spec_audits.contract.reader import ContractError
from spec_audits.runner.run_config import RunConfig
from spec_audits.runner.study import expand_runs, record_study, study_configs


def test_one_config_per_model_and_reasoning_setting(tmp_path: Path) -> None:
    base = RunConfig(suite_dir=tmp_path / "suite", out=tmp_path / "study", seed=4)
    configs = study_configs(base, ("openai/gpt-4o-mini", "openrouter/qwen/qwen3"), ("low", "high"))
    assert [(c.model, c.reasoning_effort, c.out.name) for c in configs] == [
        ("openai/gpt-4o-mini", "low", "gpt-4o-mini-reasoning-low"),
        ("openai/gpt-4o-mini", "high", "gpt-4o-mini-reasoning-high"),
        ("openrouter/qwen/qwen3", "low", "qwen3-reasoning-low"),
        ("openrouter/qwen/qwen3", "high", "qwen3-reasoning-high"),
    ]
    assert {c.seed for c in configs} == {4} and {c.out.parent for c in configs} == {tmp_path / "study"}


def test_models_sharing_a_folder_name_are_refused(tmp_path: Path) -> None:
    base = RunConfig(suite_dir=tmp_path / "suite", out=tmp_path / "study")
    with pytest.raises(ContractError) as caught:
        study_configs(base, ("openai/gpt-4o", "azure/gpt-4o"), (None,))
    assert str(caught.value) == (f"{tmp_path / 'study'}: two runs of the study would share the folder 'gpt-4o'; "
                                 "give each --model once (models whose last path parts agree need separate studies)")


def test_a_wider_rerun_adds_runs_and_keeps_the_earlier_ones(tmp_path: Path) -> None:
    study = tmp_path / "study"
    record_study(study, tmp_path / "suite", ["a", "b"])
    record_study(study, tmp_path / "suite", ["c", "a"])
    assert json.loads((study / "study.json").read_text())["runs"] == ["a", "b", "c"]
    assert expand_runs((study, tmp_path / "single")) == [study / "a", study / "b", study / "c", tmp_path / "single"]


def test_a_broken_study_file_names_itself(tmp_path: Path) -> None:
    (tmp_path / "study.json").write_text('{"runs": ["../elsewhere"]}')
    with pytest.raises(ContractError, match=r"study.json: 'runs' must be a list of run folder names inside"):
        expand_runs((tmp_path,))
