"""The recompile `spec verify` runs on a stranger's bundle, in a child process held to a budget.

The bundled spec is the stranger's: its compile runs in a child (`python -m
spec_audits.runner.commands.publish.recompile`) with limits on CPU time, address space and file size
(setrlimit), a wall-clock limit enforced by the parent, the compiler's own row, trial and byte budget set
from the suite it must reproduce, no network, an environment holding none of the user's variables (no API
keys), and its temporary files in the verify's scratch folder. It reports what the spec reads (with roles)
and writes the suite it compiles; each way it can fail is one message naming the spec and the limit, never
a traceback.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import resource
import signal
import socket
import subprocess
import sys
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

STARTUP_SECONDS = 60.0
"""Wall-clock time the child may take on top of its budget to start (imports, under load)."""


@dataclass(frozen=True)
class Limits:
    """The recompile's budget: wall-clock and CPU seconds, MiB of address space, and the rows, trials
    and bytes of the suite it must reproduce (the compiler stops at those; a file may not grow past
    `file_bytes`)."""

    seconds: float
    memory_mib: int
    rows: int
    trials: int
    file_bytes: int


class Diagnostics(str):
    """A failure whose later lines are the compiler's diagnostics (which show a spec's control characters as
    escapes): printed as lines, where every other failure, which may hold a stranger's newline, is one line."""


DIAGNOSED = "does not compile:\n"


@dataclass(frozen=True)
class Recompiled:
    """What the child found: the files the spec reads (path below the bundle -> role), or why it failed."""

    read: dict[str, str] | None
    failure: str | None


def _environment(scratch: Path) -> dict[str, str]:
    """The child's environment: a path to find programs, the locale, and scratch as home and temp."""
    kept = {name: os.environ[name] for name in ("PATH", "LANG", "LC_ALL", "PYTHONPATH") if name in os.environ}
    return {**kept, "HOME": str(scratch), "TMPDIR": str(scratch), "OPENBLAS_NUM_THREADS": "1",
            "OMP_NUM_THREADS": "1", "PYTHONDONTWRITEBYTECODE": "1"}


def recompile(folder: Path, compile_dir: Path, spec: Path, out: Path, limits: Limits, shown: str) -> Recompiled:
    """Compile `spec` (relative to `compile_dir`, in the bundle `folder`) into `out` in a child held to
    `limits`; `shown` names the spec in messages."""
    request = {"folder": str(folder), "compile_dir": str(compile_dir), "spec": str(spec), "out": str(out),
               "limits": asdict(limits)}
    try:
        child = [sys.executable, "-m", "spec_audits.runner.commands.publish.recompile", json.dumps(request)]
        done = subprocess.run(child, capture_output=True, timeout=limits.seconds + STARTUP_SECONDS,
                              stdin=subprocess.DEVNULL, env=_environment(out.parent), cwd=out.parent, check=False)
    except subprocess.TimeoutExpired:
        return Recompiled(None, f"{shown}: the recompile did not finish within {limits.seconds:g} s, its time "
                                "budget; pass --max-seconds to allow more")
    try:
        report = json.loads(done.stdout.decode("utf-8").splitlines()[-1]) if done.returncode == 0 else None
    except (ValueError, IndexError):
        report = None
    if report is None:
        return Recompiled(None, f"{shown}: the recompile stopped: {_ending(done, limits)}")
    if "error" in report:
        failure = f"{shown}: {report['error']}"
        diagnosed = report["error"].startswith(DIAGNOSED)
        return Recompiled(report.get("read"), Diagnostics(failure) if diagnosed else failure)
    return Recompiled(report["read"], None)


def _ending(done: subprocess.CompletedProcess[bytes], limits: Limits) -> str:
    if done.returncode in (-signal.SIGXCPU, -signal.SIGKILL):
        return f"it used up its {limits.seconds:g} s of CPU time; pass --max-seconds to allow more"
    last = (done.stderr.decode("utf-8", errors="replace").strip().splitlines() or ["no message"])[-1]
    if done.returncode < 0:
        return (f"killed by {signal.Signals(-done.returncode).name} (likely out of its {limits.memory_mib} MiB "
                f"memory budget; pass --max-memory to allow more): {last}")
    return f"exit status {done.returncode}: {last}"


def _limit(limits: Limits) -> None:
    """The child's own limits, set before it reads the stranger's spec: each the lower of its budget and the
    limit it inherited (a process may lower a limit, never raise its hard limit)."""
    cpu = max(1, int(limits.seconds) + 1)
    _lower(resource.RLIMIT_CPU, cpu, cpu + 5)
    _lower(resource.RLIMIT_AS, limits.memory_mib * 1024**2)
    _lower(resource.RLIMIT_FSIZE, limits.file_bytes)
    _lower(resource.RLIMIT_CORE, 0)
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails with EFBIG instead


def _lower(kind: int, soft: int, hard: int | None = None) -> None:
    """Set limit `kind` to (soft, hard), each no higher than the one the process inherited."""
    inherited_soft, inherited_hard = resource.getrlimit(kind)

    def capped(value: int, *inherited: int) -> int:
        return min([value, *(limit for limit in inherited if limit != resource.RLIM_INFINITY)])

    resource.setrlimit(kind, (capped(soft, inherited_soft, inherited_hard),
                              capped(soft if hard is None else hard, inherited_hard)))


class _NoSocket(socket.socket):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise OSError(errno.EACCES, "a recompile in `spec verify` has no network")


def _compile(request: dict[str, Any], limits: Limits) -> dict[str, Any]:
    from spec_audits.compiler.budget import Budget
    from spec_audits.compiler.dispatch.build import compile_file
    from spec_audits.compiler.errors import SpecError
    from spec_audits.compiler.files import spec_roots
    from spec_audits.runner.commands.publish.sources import read_by

    folder, spec, out = Path(request["folder"]), Path(request["spec"]), Path(request["out"])
    allowed = (folder / "sources",)
    # the planned bytes are an estimate (within 2%): twice the file limit never refuses the suite itself
    budget = Budget(rows=limits.rows, trials=limits.trials, bytes=2 * limits.file_bytes, seconds=limits.seconds)
    read: dict[str, str] = {}
    try:
        with contextlib.chdir(request["compile_dir"]), spec_roots(spec, allowed):
            read = {_below(folder, path): role for path, role in read_by(spec).items()}
            compile_file(spec, out, allowed=allowed, budget=budget)
    except SpecError as err:
        return {"read": read or None, "error": f"{DIAGNOSED}{err}"}
    except OSError as err:
        if err.errno != errno.EFBIG:
            raise
        return {"error": f"the recompile wrote a file larger than {limits.file_bytes:,} bytes, more than the suite "
                         "it must reproduce: it does not compile to this suite"}
    return {"read": read}


def _below(folder: Path, path: Path) -> str:
    """`path` relative to the bundle folder, or its name marked as outside it."""
    return path.relative_to(folder).as_posix() if path.is_relative_to(folder) else f"(outside the bundle) {path}"


def main() -> None:
    request = json.loads(sys.argv[1])
    limits = Limits(**request["limits"])
    _limit(limits)
    socket.socket = _NoSocket  # type: ignore[misc]  # typeshed's socket is a class, never replaced: here it is, on purpose
    try:
        report = _compile(request, limits)
    except (MemoryError, ImportError, OSError, SystemError) as err:
        if not _out_of_memory(err):
            raise
        report = {"error": f"the recompile ran out of its {limits.memory_mib} MiB memory budget; pass --max-memory "
                           "to allow more"}
    print(json.dumps(report))


def _out_of_memory(err: BaseException) -> bool:
    """Whether `err` says the child ran out of its memory, also while importing what it compiles with (which it
    does as it goes: pydantic only when writing): a library it cannot map, a package folder it cannot list, or
    C code whose failed allocation set no MemoryError (CPython then raises a SystemError, "error return without
    exception set" or "... returned NULL without setting an exception": seen importing the bundle readers at the
    edge of the address-space limit)."""
    if isinstance(err, OSError):
        return err.errno == errno.ENOMEM
    if isinstance(err, SystemError):
        return "without exception set" in str(err) or "without setting an exception" in str(err)
    return isinstance(err, MemoryError) or "map" in str(err) or "allocate memory" in str(err)


if __name__ == "__main__":
    main()
