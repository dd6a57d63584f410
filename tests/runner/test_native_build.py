"""The embedded model's native build: portable flags, the crash-and-rebuild path of .ci/setup, the
instructions actually in the installed libraries, and `spec doctor`."""

from __future__ import annotations

import importlib.util
import inspect
import json
import re
import shutil
import signal
import subprocess
import sys
import threading
import tomllib
from pathlib import Path

import pytest
from click.testing import CliRunner

from spec_audits.local.native import describe_failure, run_smoke, smoke_line
from spec_audits.runner.commands import doctor as doctor_module
from spec_audits.runner.commands.doctor import doctor
from tests.support import ROOT

# AVX-512 (zmm, opmask and the upper 16 vector registers only EVEX encodes) and AMX (tile instructions)
UNPORTABLE = re.compile(
    r"%zmm\d|%k[1-7]\b|%[xy]mm(1[6-9]|2\d|3[01])\b|\b(ldtilecfg|sttilecfg|tileloadd\w*|tilestored|tilezero|tdp\w+ps|tdpb\w+d)\b"
)


def _load_build_script():
    spec = importlib.util.spec_from_file_location("llama_build", ROOT / ".ci" / "llama_build.py")
    module = importlib.util.module_from_spec(spec)
    assert spec.loader is not None
    spec.loader.exec_module(module)
    return module


build = _load_build_script()


def _flags(args: list[str]) -> dict[str, str]:
    return dict(arg.removeprefix("-D").split("=", 1) for arg in args if arg.startswith("-D"))


def test_portable_x86_build_is_avx2_level_and_never_native() -> None:
    flags = _flags(build.cmake_args("x86_64", "portable"))
    assert flags["GGML_NATIVE"] == "OFF"
    assert all(flags[f"GGML_{f}"] == "ON" for f in ("AVX", "AVX2", "FMA", "F16C", "BMI2"))
    assert all(flags[f"GGML_{f}"] == "OFF" for f in ("AVX512", "AVX512_VNNI", "AMX_TILE", "AMX_INT8", "AMX_BF16"))


def test_conservative_builds_turn_every_extension_off() -> None:
    flags = _flags(build.cmake_args("x86_64", "conservative"))
    assert len(flags) == 17 and set(flags.values()) == {"OFF"}
    assert "-DGGML_CPU_ARM_ARCH=armv8-a" in build.cmake_args("arm64", "conservative")
    assert not any("ARM_ARCH" in a for a in build.cmake_args("arm64", "portable"))


def test_user_cmake_args_go_last_but_never_native() -> None:
    args = build.cmake_args("x86_64", "portable", "-DGGML_NATIVE=ON -DGGML_CUDA=ON -march=native")
    assert args[-1] == "-DGGML_CUDA=ON" and _flags(args)["GGML_NATIVE"] == "OFF"


def test_the_wheel_store_is_keyed_by_the_flags_and_the_pinned_version(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SPEC_WHEEL_STORE", str(tmp_path))
    portable = build.store_folder(build.cmake_args("x86_64", "portable"))
    conservative = build.store_folder(build.cmake_args("x86_64", "conservative"))
    assert portable != conservative and portable.parent == tmp_path
    pinned = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    assert f"llama-cpp-python=={build.VERSION}" in pinned


def _completed(code: int, stdout: str = "", stderr: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.CompletedProcess(["smoke"], code, stdout, stderr)


OK = _completed(0, json.dumps({"system_info": "CPU : AVX2 = 1", "threads": 1, "logprobs": {}, "seconds": 1.5}))


def test_a_crash_rebuilds_once_with_conservative_flags(capsys: pytest.CaptureFixture[str]) -> None:
    results, rebuilt, removed = [_completed(-signal.SIGILL, stderr="Illegal instruction"), OK], [], []
    assert build.check(lambda: results.pop(0), rebuilt.append, lambda: removed.append(True)) == 0
    err = capsys.readouterr()
    assert rebuilt == ["conservative"] and not removed
    assert "smoke test was killed by SIGILL (an instruction this CPU does not run)" in err.err
    assert "CPU: " in err.err and "build flags: " in err.err
    assert "embedded model OK (conservative build): 1.5 s" in err.out


def test_two_crashes_remove_the_build_and_fail(capsys: pytest.CaptureFixture[str]) -> None:
    rebuilt, removed = [], []
    crash = _completed(-signal.SIGSEGV)
    assert build.check(lambda: crash, rebuilt.append, lambda: removed.append(True)) == 1
    assert rebuilt == ["conservative"] and removed == [True]
    assert "llama-cpp-python was removed so that `spec run` cannot crash" in capsys.readouterr().err


def test_an_ordinary_failure_is_reported_without_a_rebuild(capsys: pytest.CaptureFixture[str]) -> None:
    rebuilt: list[str] = []
    assert build.check(lambda: _completed(1, stderr="ModuleNotFoundError: x"), rebuilt.append, lambda: None) == 1
    assert rebuilt == [] and "exited with status 1" in capsys.readouterr().err


def test_a_real_signal_in_a_child_is_named() -> None:
    child = subprocess.run([sys.executable, "-c", "import os, signal; os.kill(os.getpid(), signal.SIGILL)"],
                           capture_output=True, text=True)
    assert child.returncode == -signal.SIGILL
    assert describe_failure(child).startswith("the embedded-model smoke test was killed by SIGILL")


def test_the_smoke_test_loads_the_embedded_model_and_scores_a_prompt() -> None:
    result = run_smoke()
    assert result.returncode == 0, result.stderr
    report = smoke_line(result)
    assert report and set(report["logprobs"]) == {"A", "B"} and report["system_info"].startswith("CPU : ")
    assert all(value < 0 for value in report["logprobs"].values())
    assert "full-size SWA cache" not in result.stderr  # llama.cpp's chatter stays hidden


def _disassembly(path: Path) -> str:
    return subprocess.run(["objdump", "-d", "--no-show-raw-insn", str(path)], capture_output=True, text=True,
                          check=True).stdout


@pytest.mark.skipif(shutil.which("objdump") is None, reason="objdump (binutils) is not installed")
def test_installed_llama_libraries_hold_no_avx512_or_amx_instruction() -> None:
    import llama_cpp

    libraries = sorted((Path(llama_cpp.__file__).parent / "lib").glob("libggml*.so"))
    assert libraries, "no libggml shared objects next to llama_cpp"
    for library in libraries:
        found = UNPORTABLE.search(_disassembly(library))
        assert found is None, f"{library.name}: {found.group(0) if found else ''}"


@pytest.mark.skipif(shutil.which("objdump") is None or shutil.which("gcc") is None, reason="needs objdump and gcc")
def test_the_instruction_check_finds_avx512_and_amx_code(tmp_path: Path) -> None:
    source = tmp_path / "wide.c"
    source.write_text(
        "#include <immintrin.h>\n"
        "__m512 add(__m512 a, __m512 b) { return _mm512_add_ps(a, b); }\n"
        "void load(const void *p) { _tile_loadd(0, p, 64); }\n"
    )
    subprocess.run(["gcc", "-O2", "-mavx512f", "-mamx-tile", "-shared", "-fPIC", "-o", str(tmp_path / "w.so"),
                    str(source)], check=True)
    found = set(match.group(0) for match in UNPORTABLE.finditer(_disassembly(tmp_path / "w.so")))
    assert any(f.startswith("%zmm") for f in found) and "tileloadd" in found


def test_doctor_prints_every_field_and_passes_the_smoke_test() -> None:
    result = CliRunner().invoke(doctor, ["--json"])
    assert result.exception is None and result.exit_code == 0, result.output
    report = json.loads(result.output)
    assert list(report) == ["spec", "python", "platform", "cpu", "llama-cpp-python", "llama.cpp build",
                            "embedded model", "local threads", "litellm", "cache", "llama.cpp system info",
                            "smoke test"]
    assert report["smoke test"].startswith("ok: loaded the embedded model and scored one prompt in ")
    assert re.search(r"sha256 [0-9a-f]{64}", report["embedded model"])


def test_doctor_reports_a_crashing_build_and_exits_1(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(doctor_module, "run_smoke", lambda: _completed(-signal.SIGILL))
    result = CliRunner().invoke(doctor, [])
    assert result.exit_code == 1 and isinstance(result.exception, SystemExit)
    assert "smoke test:" in result.output
    assert "FAILED: the embedded-model smoke test was killed by SIGILL (an instruction this CPU does not run)" in (
        result.output)


def test_doctor_without_the_smoke_test_does_not_load_the_model() -> None:
    result = CliRunner().invoke(doctor, ["--no-smoke"])
    assert result.exit_code == 0 and result.exception is None
    assert "smoke test" not in result.output and result.output.startswith("spec:")


def test_a_failed_pip_step_is_a_message_not_a_traceback(monkeypatch: pytest.MonkeyPatch,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    def failing(level: str) -> None:
        raise subprocess.CalledProcessError(1, [sys.executable, "-m", "pip", "wheel", "llama-cpp-python==0.3.36"])

    monkeypatch.setattr(build, "install", failing)
    monkeypatch.setattr(build, "read_record", lambda: None)
    assert build.main(["install"]) == 1
    assert capsys.readouterr().err == (
        "setup: `pip wheel llama-cpp-python==0.3.36` failed (exit 1); pip's messages are above. "
        "Building llama-cpp-python needs a C/C++ compiler and cmake >= 3.21.\n")


def test_an_unknown_setup_command_prints_the_usage(capsys: pytest.CaptureFixture[str]) -> None:
    assert build.main(["instal"]) == 2
    assert capsys.readouterr().err == "usage: python .ci/llama_build.py install|check\n"


def test_a_long_build_prints_a_line_a_minute_with_how_far_it_is_until_it_ends() -> None:
    lines: list[str] = []
    beaten = threading.Event()

    def say(line: str) -> None:
        lines.append(line)
        beaten.set()

    with build.heartbeat("still building llama-cpp-python==0.3.36", every_s=0.01, say=say,
                         status=lambda: ", compiled 40%"):
        assert beaten.wait(60)  # the block lasts until the first line, however slow the machine
    count = len(lines)
    assert lines[0].startswith("setup: still building llama-cpp-python==0.3.36: ")
    assert lines[0].endswith(" so far, compiled 40%")
    threading.Event().wait(0.05)
    assert len(lines) == count  # no line once the block has ended
    assert inspect.signature(build.heartbeat).parameters["every_s"].default == 60.0


def test_the_build_estimate_follows_the_cores_and_the_load() -> None:
    assert build.estimate_minutes(2, 0.0) == pytest.approx(3.8)  # the measured idle build: 3 min 47 s
    assert build.estimate_minutes(2, 10.0) == pytest.approx(22.8)  # issue 36: about 22 min at load 3-26
    assert build.estimate_minutes(16, 0.0) == pytest.approx(0.475)
    assert build.estimate_line(2, 10.0) == ("setup: building llama-cpp-python==0.3.36 from source: about 23 minutes "
                                            "here (2 cores, load 10.0; 7.6 core-minutes of compiling, longer if the "
                                            "load rises)")


def test_the_builds_progress_is_read_from_its_output() -> None:
    assert build.build_progress("  [37/148] Building CXX object vendor/llama.cpp/ggml/src/ggml.c.o") == 25
    assert build.build_progress("[ 45%] Building C object ggml/src/CMakeFiles/ggml-base.dir/ggml.c.o") == 45
    assert build.build_progress("Building wheel for llama-cpp-python (pyproject.toml): started") is None

