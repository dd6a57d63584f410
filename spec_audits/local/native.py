"""What the embedded model's native build needs to know about this machine; standard library only, because
.ci/llama_build.py uses it before the project is installed.

The build record (`spec-llama-build.json` in the environment's prefix) says which CMake flags built
llama-cpp-python; the smoke test (`python -m spec_audits.local.smoke`) proves in a child process that the
build runs here.
"""

from __future__ import annotations

import json
import platform
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any, TypedDict

RECORD_NAME = "spec-llama-build.json"
SMOKE_TIMEOUT_S = 600
_FEATURES = ("sse4_2", "avx", "fma", "f16c", "bmi2", "amx", "asimd", "sve", "dotprod", "i8mm", "bf16", "sme")


def machine() -> str:
    """x86_64, arm64 or the platform's own name for anything else."""
    name = platform.machine().lower()
    return {"amd64": "x86_64", "aarch64": "arm64"}.get(name, name)


class CpuInfo(TypedDict):
    model: str
    features: list[str]


def cpu_info() -> CpuInfo:
    """The CPU's model name and the SIMD features that matter to ggml (from /proc/cpuinfo where there is one)."""
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return {"model": platform.processor() or machine(), "features": []}
    fields: dict[str, str] = {}
    for line in text.splitlines():
        key, sep, value = line.partition(":")
        if sep:
            fields.setdefault(key.strip(), value.strip())
    flags = (fields.get("flags") or fields.get("Features") or "").split()
    model = fields.get("model name") or fields.get("Hardware") or fields.get("CPU part") or machine()
    return {"model": model, "features": [flag for flag in flags if flag.startswith(_FEATURES)]}


def cpu_summary() -> str:
    info = cpu_info()
    features = " ".join(info["features"]) or "none listed"
    return f"{info['model']} ({machine()}); features: {features}"


def record_path(prefix: str = sys.prefix) -> Path:
    return Path(prefix) / RECORD_NAME


def read_record(prefix: str = sys.prefix) -> dict[str, Any] | None:
    """The build record, or None where llama-cpp-python was not installed by .ci/setup."""
    try:
        record: dict[str, Any] = json.loads(record_path(prefix).read_text())
    except (OSError, ValueError):
        return None
    return record


def run_smoke(python: str = sys.executable, timeout_s: float = SMOKE_TIMEOUT_S) -> subprocess.CompletedProcess[str]:
    """Load the embedded model and score one prompt in a child process; a crash stays in the child."""
    try:
        return subprocess.run([python, "-m", "spec_audits.local.smoke"], capture_output=True, text=True,
                              timeout=timeout_s)
    except subprocess.TimeoutExpired as err:
        return subprocess.CompletedProcess(err.cmd, 124, "", f"no answer within {timeout_s:.0f} s")


def smoke_line(result: subprocess.CompletedProcess[str]) -> dict[str, Any] | None:
    """The smoke test's JSON report, or None when it printed none."""
    lines = (result.stdout or "").strip().splitlines()
    try:
        return json.loads(lines[-1]) if lines else None
    except ValueError:
        return None


def describe_failure(result: subprocess.CompletedProcess[str]) -> str:
    """How the smoke test failed, with the CPU and the build flags a bug report needs."""
    if result.returncode < 0:
        name = signal.Signals(-result.returncode).name
        how = f"was killed by {name}" + (" (an instruction this CPU does not run)" if name == "SIGILL" else "")
    else:
        how = f"exited with status {result.returncode}"
    record = read_record() or {}
    flags = " ".join(record.get("cmake_args", [])) or "not recorded (not installed by .ci/setup)"
    tail = "\n".join((result.stderr or "").strip().splitlines()[-15:])
    return f"the embedded-model smoke test {how}\n  CPU: {cpu_summary()}\n  build flags: {flags}\n{tail}".rstrip()
