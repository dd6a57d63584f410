"""Build and install llama-cpp-python for any CPU of this architecture, then prove that it runs here.

Run by .ci/setup with the virtual environment's Python (standard library only; the project's own
spec_audits/local/native.py is imported from the checkout, so nothing needs to be installed yet):

    python .ci/llama_build.py install   # a portable build, unless the recorded one already matches
    python .ci/llama_build.py check     # load the embedded model in a child; after a crash rebuild once

Why not pip's default: llama-cpp-python builds llama.cpp with -march=native, so a wheel built on one CPU
can hold instructions (AVX-512, AMX) that another CPU, or a VM that advertises AMX without enabling it,
traps on; and pip's wheel cache hands that wheel back whatever CMAKE_ARGS say later. llama.cpp's runtime
CPU dispatch (GGML_BACKEND_DL with GGML_CPU_ALL_VARIANTS) is not usable through llama-cpp-python 0.3.36:
its CMakeLists installs only the plain ggml-cpu library, it never calls ggml_backend_load_all, and the
dispatcher would pick the AMX variant on exactly the VMs that crash. So the build is a fixed level:
AVX2/FMA/F16C/BMI2 on x86-64 (every x86-64 CPU since 2013), the compiler's default on arm64 (armv8-a);
after a crash, the most conservative level (nothing beyond the architecture's baseline). Wheels are kept
in a store keyed by the flags, never in pip's cache, and the flags are recorded for `spec doctor`.
"""

from __future__ import annotations

import collections
import contextlib
import hashlib
import json
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from spec_audits.local.native import (  # noqa: E402
    cpu_summary,
    describe_failure,
    machine,
    read_record,
    record_path,
    run_smoke,
    smoke_line,
)

VERSION = "0.3.36"
PACKAGE = f"llama-cpp-python=={VERSION}"
_COMMON = ["-DLLAVA_BUILD=OFF", "-DGGML_NATIVE=OFF", "-DGGML_CCACHE=OFF"]
_X86_PORTABLE = ["SSE42", "AVX", "AVX2", "BMI2", "FMA", "F16C"]
_X86_OFF = ["AVX512", "AVX512_VBMI", "AVX512_VNNI", "AVX512_BF16", "AVX_VNNI", "AMX_TILE", "AMX_INT8", "AMX_BF16"]


def cmake_args(arch: str, level: str, extra: str = "") -> list[str]:
    """The CMake flags for `level` ('portable' or 'conservative') on `arch`; the user's CMAKE_ARGS go last,
    less any -march=native."""
    args = list(_COMMON)
    if arch == "x86_64":
        on = _X86_PORTABLE if level == "portable" else []
        args += [f"-DGGML_{flag}={'ON' if flag in on else 'OFF'}" for flag in _X86_PORTABLE + _X86_OFF]
    elif arch == "arm64" and level == "conservative":
        args.append("-DGGML_CPU_ARM_ARCH=armv8-a")
    return args + [arg for arg in extra.split() if "native" not in arg.lower()]


def wheel_store() -> Path:
    """$SPEC_WHEEL_STORE, else <user cache>/spec/wheels: one folder per (version, architecture, flags)."""
    if os.environ.get("SPEC_WHEEL_STORE"):
        return Path(os.environ["SPEC_WHEEL_STORE"])
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "spec" / "wheels"


def store_folder(args: list[str]) -> Path:
    key = hashlib.sha256(json.dumps([VERSION, machine(), args]).encode()).hexdigest()[:16]
    return wheel_store() / f"llama-cpp-python-{VERSION}-{machine()}-{key}"


CORE_MINUTES = 7.6
"""The build's compiling work in core-minutes: 3 min 47 s on an idle 2-core VM (README, "Quickstart")."""
_STEP = re.compile(r"\[\s*(\d+)/(\d+)\]|\[\s*(\d+)%\]")  # ninja's [12/150] or make's [ 45%]


def estimate_minutes(cores: int, load: float) -> float:
    """The build's wall time on `cores` cores while other work keeps `load` of them busy (the 1-minute load
    average): the build's share of the machine is cores / (cores + load) of its cores."""
    return CORE_MINUTES * (cores + load) / cores**2


def estimate_line(cores: int, load: float) -> str:
    minutes = estimate_minutes(cores, load)
    return (f"setup: building {PACKAGE} from source: about {minutes:.0f} minutes here ({cores} cores, load "
            f"{load:.1f}; {CORE_MINUTES} core-minutes of compiling, longer if the load rises)")


def build_progress(line: str) -> int | None:
    """The percentage a build output line reports (ninja's [k/n], make's [ p%]), or None."""
    found = _STEP.search(line)
    if found is None:
        return None
    if found.group(3) is not None:
        return int(found.group(3))
    done, total = int(found.group(1)), int(found.group(2))
    return 100 * done // total if total else None


@contextlib.contextmanager
def heartbeat(what: str, every_s: float = 60.0, say: Callable[[str], None] | None = None,
              status: Callable[[], str] = str) -> Iterator[None]:
    """A line every `every_s` seconds while the block runs (with `status()`, e.g. how far the build is), so that
    a long quiet build is seen to be alive."""
    say = say or (lambda line: print(line, flush=True))
    stop = threading.Event()
    started = time.monotonic()

    def beat() -> None:
        while not stop.wait(every_s):
            say(f"setup: {what}: {(time.monotonic() - started) / 60:.0f} min so far{status()}")

    thread = threading.Thread(target=beat, daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()


def _pip(*args: str, env: dict[str, str] | None = None) -> None:
    subprocess.run([sys.executable, "-m", "pip", *args], check=True, env=env)


def _pip_watched(args: list[str], env: dict[str, str], seen: list[int]) -> None:
    """pip with its build output read line by line: the last percentage into `seen`, the output's tail shown
    only when pip fails."""
    command = [sys.executable, "-m", "pip", *args]
    tail: collections.deque[str] = collections.deque(maxlen=80)
    with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env,
                          errors="replace") as child:
        assert child.stdout is not None
        for line in child.stdout:
            tail.append(line)
            percent = build_progress(line)
            if percent is not None:
                seen.append(percent)
    if child.returncode:
        sys.stderr.write("".join(tail))
        raise subprocess.CalledProcessError(child.returncode, command)


def build_wheel(args: list[str]) -> Path:
    """The wheel for these flags, built once into the store with pip's wheel cache off."""
    folder = store_folder(args)
    if not sorted(folder.glob("*.whl")):
        folder.parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=folder.name + ".", dir=folder.parent))
        cores = os.cpu_count() or 1
        print(f"{estimate_line(cores, os.getloadavg()[0])}\n  flags: {' '.join(args)}", flush=True)
        env = {**os.environ, "CMAKE_ARGS": " ".join(args)}
        seen: list[int] = []

        def status() -> str:
            done = f", compiled {seen[-1]}%" if seen else ""
            load = os.getloadavg()[0]
            return f"{done} (at load {load:.1f} the whole build takes about {estimate_minutes(cores, load):.0f} min)"

        with heartbeat(f"still building {PACKAGE}", status=status):
            _pip_watched(["wheel", "-v", "--no-cache-dir", "--no-deps", "--no-binary", "llama-cpp-python", PACKAGE,
                          "-w", str(staging)], env, seen)
        staging.replace(folder)
    return sorted(folder.glob("*.whl"))[0]


def _installed() -> bool:
    shown = subprocess.run([sys.executable, "-m", "pip", "show", "llama-cpp-python"], capture_output=True, text=True)
    return shown.returncode == 0 and f"Version: {VERSION}" in shown.stdout


def install(level: str) -> None:
    """Install the `level` build unless the recorded build has the same flags and is still installed."""
    args = cmake_args(machine(), level, os.environ.get("CMAKE_ARGS", ""))
    record = read_record()
    if record and record.get("cmake_args") == args and _installed():
        return
    wheel = build_wheel(args)
    _pip("install", "--quiet", "--no-deps", "--force-reinstall", "--no-index", str(wheel))
    record = {"llama_cpp_python": VERSION, "level": level, "machine": machine(), "cmake_args": args,
              "wheel": str(wheel), "built_on": cpu_summary()}
    record_path().write_text(json.dumps(record, indent=2) + "\n")


def _report_ok(result: subprocess.CompletedProcess[str], label: str) -> int:
    report = smoke_line(result) or {}
    print(f"setup: embedded model OK{label}: {report.get('seconds', '?')} s to load and score one prompt")
    return 0


def uninstall() -> None:
    _pip("uninstall", "--quiet", "--yes", "llama-cpp-python")
    record_path().unlink(missing_ok=True)


def check(smoke: Callable[[], subprocess.CompletedProcess[str]] = run_smoke,
          reinstall: Callable[[str], None] = install, remove: Callable[[], None] = uninstall) -> int:
    """Smoke-test the build; after a crash rebuild once at the conservative level; never leave a crashing
    build installed."""
    result = smoke()
    if result.returncode == 0:
        return _report_ok(result, "")
    print(f"setup: {describe_failure(result)}", file=sys.stderr)
    if result.returncode > 0:
        return 1
    print("setup: rebuilding llama-cpp-python with the most conservative flags", file=sys.stderr)
    reinstall("conservative")
    result = smoke()
    if result.returncode == 0:
        return _report_ok(result, " (conservative build)")
    print(f"setup: {describe_failure(result)}", file=sys.stderr)
    remove()
    print("setup: llama-cpp-python was removed so that `spec run` cannot crash: the embedded model does not "
          "run on this CPU. Models named with --model still work. Please report the lines above.", file=sys.stderr)
    return 1


def main(argv: list[str]) -> int:
    try:
        return _command(argv)
    except subprocess.CalledProcessError as err:
        print(f"setup: `{' '.join(map(str, err.cmd[2:]))}` failed (exit {err.returncode}); pip's messages are "
              "above. Building llama-cpp-python needs a C/C++ compiler and cmake >= 3.21.", file=sys.stderr)
        return 1


def _command(argv: list[str]) -> int:
    if argv == ["install"]:
        # a CPU on which the portable build crashed keeps the conservative build on later runs of setup
        install("conservative" if (read_record() or {}).get("level") == "conservative" else "portable")
        return 0
    if argv == ["check"]:
        return check()
    print("usage: python .ci/llama_build.py install|check", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
