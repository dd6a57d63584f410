"""`spec doctor`: what a bug report needs, and the embedded model's smoke test run in a child process."""

from __future__ import annotations

import json
import os
import platform
import sys
from importlib import metadata

import click

from spec_audits.base.user_cache import cache_dir
from spec_audits.contract.writer import file_sha256
from spec_audits.local.native import cpu_summary, describe_failure, read_record, record_path, run_smoke, smoke_line

_MODEL_FILE = "gemma-3-270m-q4_k_m.gguf"


def _version(package: str) -> str:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return "not installed"


def _build() -> str:
    record = read_record()
    if record is None:
        return f"not recorded ({record_path()} is missing: llama-cpp-python was not installed by .ci/setup)"
    return f"{record['level']} build for any {record['machine']} CPU: {' '.join(record['cmake_args'])}"


def _model_file() -> str:
    path = cache_dir() / "models" / _MODEL_FILE
    if not path.is_file():
        return f"{path} (not assembled yet: the first local run or the smoke test writes it)"
    return f"{path} ({path.stat().st_size / 1e6:.0f} MB, sha256 {file_sha256(path)})"


def _cache() -> str:
    folder = cache_dir()
    size = sum(f.stat().st_size for f in folder.rglob("*") if f.is_file()) if folder.is_dir() else 0
    return f"{folder} ({size / 1e6:.1f} MB)"


def _threads() -> str:
    from spec_audits.local.model import THREADS_ENV, default_threads

    chosen = os.environ.get(THREADS_ENV)
    return f"{chosen} (from ${THREADS_ENV})" if chosen else f"{default_threads()} (default; see docs/running.md)"


def facts() -> dict[str, str]:
    """Everything but the smoke test, as label -> value."""
    return {
        "spec": _version("spec-audits"),
        "python": f"{platform.python_version()} ({sys.executable})",
        "platform": platform.platform(),
        "cpu": cpu_summary(),
        "llama-cpp-python": _version("llama-cpp-python"),
        "llama.cpp build": _build(),
        "embedded model": _model_file(),
        "local threads": _threads(),
        "litellm": _version("litellm"),
        "cache": _cache(),
    }


def smoke_facts() -> tuple[bool, dict[str, str]]:
    """Run the smoke test: (passed, label -> value)."""
    result = run_smoke()
    report = smoke_line(result)
    if result.returncode != 0 or report is None:
        return False, {"smoke test": "FAILED: " + describe_failure(result)}
    scores = ", ".join(f"{token} {logprob}" for token, logprob in report["logprobs"].items())
    return True, {
        "llama.cpp system info": report["system_info"],
        "smoke test": f"ok: loaded the embedded model and scored one prompt in {report['seconds']} s "
        f"with {report['threads']} thread(s) (log-probabilities {scores})",
    }


@click.command()
@click.option("--no-smoke", is_flag=True, help="Skip the smoke test (loading the embedded model in a child).")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object instead of lines.")
def doctor(no_smoke: bool, as_json: bool) -> None:
    """Print what a bug report needs and test that the embedded model runs on this CPU.

    The smoke test loads the embedded model and scores one prompt in a child
    process, so that a build this CPU cannot run is reported, not suffered.
    Exit status 1 when the smoke test fails.

    \b
    Examples:
      spec doctor
      spec doctor --json > doctor.json
    """
    passed, found = (True, {}) if no_smoke else smoke_facts()
    report = {**facts(), **found}
    if as_json:
        click.echo(json.dumps(report, indent=2))
    else:
        width = max(map(len, report))
        for label, value in report.items():
            click.echo(f"{label + ':':<{width + 2}}{value}")
    if not passed:
        raise SystemExit(1)
