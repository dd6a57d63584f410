"""Studies: one suite run against several models (and reasoning settings) into one folder.

A study folder holds one ordinary run folder per (model, reasoning setting) and study.json, which
lists them. Rerunning the same `spec run` resumes every run; `spec score STUDY` scores them together.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import replace
from pathlib import Path

from spec_audits.base.safe_files import present, read_text_capped
from spec_audits.contract.reader import ContractError
from spec_audits.runner.files_out import write_text
from spec_audits.runner.run_config import RunConfig

STUDY_FILE = "study.json"
STUDY_BYTES = 1024**2  # a study.json lists run folder names


RUN_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._-]*")
"""A run folder's name inside a study: one plain name, never '.', '..', hidden or a path."""


def slug(model: str) -> str:
    """A folder-name form of a model string: its last path part, unsafe characters as '-', no leading or
    trailing '-' or '.' (so never '..'); a string with nothing left is named by its hash."""
    name = re.sub(r"[^A-Za-z0-9._-]+", "-", model.rsplit("/", 1)[-1]).strip("-.")
    return name if RUN_NAME.fullmatch(name) else "model-" + hashlib.sha256(model.encode()).hexdigest()[:12]


def study_configs(config: RunConfig, models: tuple[str, ...], efforts: tuple[str | None, ...]) -> list[RunConfig]:
    """One run per model x reasoning setting, each in its own folder under the study folder config.out."""
    configs = []
    for model in models:
        for effort in efforts:
            name = slug(model) + (f"-reasoning-{slug(effort)}" if effort else "")
            configs.append(replace(config, model=model, reasoning_effort=effort, out=config.out / name))
    names = [c.out.name for c in configs]
    twice = next((name for name in names if names.count(name) > 1), None)
    if twice is not None:
        raise ContractError(config.out, f"two runs of the study would share the folder {twice!r}",
                            fix="give each --model once (models whose last path parts agree need separate studies)")
    return configs


def record_study(folder: Path, suite_dir: Path, runs: list[str]) -> None:
    """Write study.json (atomically), keeping the runs an earlier, wider invocation recorded."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / STUDY_FILE
    known = study_runs(folder) if present(path) else []
    names = [run.name for run in known] + [name for name in runs if name not in {r.name for r in known}]
    write_text(path, json.dumps({"suite": str(suite_dir), "runs": names}, indent=2) + "\n")


def is_study(folder: Path) -> bool:
    return present(folder / STUDY_FILE)


def study_runs(folder: Path) -> list[Path]:
    """The run folders a study lists, in the order they were recorded."""
    path = folder / STUDY_FILE
    try:
        names = json.loads(read_text_capped(path, STUDY_BYTES))["runs"]
    except (ValueError, KeyError, TypeError) as err:
        raise ContractError(path, f"not a readable study file ({err})",
                            fix="spec run SUITE --model A --model B --out FOLDER writes one") from None
    if not isinstance(names, list) or not all(isinstance(name, str) and RUN_NAME.fullmatch(name) for name in names):
        raise ContractError(path, "'runs' must be a list of run folder names inside the study (letters, digits, "
                            "'.', '_', '-'; never a path, '..' or a hidden name)")
    linked = next((name for name in names if (folder / name).is_symlink()), None)
    if linked is not None:
        raise ContractError(folder / linked, "is a symbolic link; a study's runs are folders inside it, never "
                            "links to runs elsewhere (spec does not score through them)",
                            fix="copy the run folder into the study, or score it by its own path")
    return [folder / name for name in names]


def expand_runs(paths: tuple[Path, ...]) -> list[Path]:
    """Run folders from run and study folders: each study stands for the runs it lists."""
    runs: list[Path] = []
    for path in paths:
        runs.extend(study_runs(path) if is_study(path) else [path])
    return runs
