"""Start-up: wall and CPU time of `spec --help`, `spec check`, `spec show` (target under 0.5 s each), beside a
bare `python -c pass` and the floor of every spec command, `python -c "import lark, pydantic"`, measured in
the same run, median of --rounds. Issue 33's target: `spec check specs/triage.spec` within 1.5x the floor's
CPU time; the ratio is printed last. The cases take turns within each round, so a change of load during the run
weighs on all of them alike.

Every measured command runs with Python's bytecode cached (in a temporary PYTHONPYCACHEPREFIX, written by one
unmeasured run of each), as an installed spec has it: this host sets PYTHONDONTWRITEBYTECODE, so until then each
`spec` command compiled its ~64 modules from source on every run (about 0.055 s of check's CPU) while lark and
pydantic loaded their installed caches.

Measured (issue 33 item 3) on the shared 2-core Xeon, median of 7 interleaved rounds, this script on main (7602eac)
and on this change one right after the other at load average 6.0-6.6, CPU seconds: `python -c pass` 0.019, the floor
0.080; `spec check specs/triage.spec` 0.283 on main (3.52x the floor) and 0.272 after (3.41x); `spec show SUITE -n
1` 0.394 and 0.390; `spec --help` 0.043 and 0.043. main's own earlier script (no bytecode caches), in the same
minute: check 0.337 s, 4.21x. 15 more interleaved check runs: 0.276 s on main, 0.264 s after (median). What this
change removed from check: the 17 field-less shapes of compiler/clauses.py as frozen dataclasses (their generated
methods, ~9 ms of import under load), the analysis records' validators (built on first use, ~5 ms), one code
generation per template (compile_text reuses the names CompiledText found) and nine of ten evaluations of the decode
settings' annotations. What is left of check's import (-X importtime, least of 5 runs at load 5.8, summed: 164 ms,
173 on main): pydantic's validation machinery (~48 ms; triage.spec's decode settings are validated with a
TypeAdapter, so it stays), lark with `regex` (~30 ms, most of it in the floor), click (~29 ms), jinja2 (~27 ms),
importlib.metadata for the family entry points (~16 ms), our ~65 modules' own code (37 ms, 54 on main); then lark
loading its tables and scanners (~35 ms), the templates' compiles and the budget's 240 sampled rows (~40 ms), and
two scans of every installed distribution's entry points (the registry's and pydantic's plugin loader). 1.5x (0.12
s) would need the decode domains checked without pydantic, lark's scanners cached and the families' dataclasses
built on first use; not done.

check-pyd (issue 33 item 3, the pydantic and entry-point part), this script with --rounds 7 on the branch before
and after (shared 2-core Xeon, CPU seconds): check 0.506 s against the floor's 0.132 (3.83x) at load 5.5-7.3 before;
0.357 s against 0.135 (2.64x) at load 11.5 after. `spec check specs/triage.spec` now imports no pydantic module and
not importlib.metadata (tests/compiler/test_lazy_families.py): the decode domains are checked from one plain table
(suite_terms.SETTING_DOMAINS, which the row model's Fields are made from), the families' analysis records are
imported where a suite is read, and the registry reads the installed families only for a name that is not built in
(a built-in one after a ~2 ms look at the path's entry_points.txt files). Most of what is left is lark's scanners
and the templates' parses (compiler/parse.py, templates.py) and building our modules' 44 dataclasses (30 ms at load 11).

Usage: python benchmarks/startup_bench.py [--rounds 7]
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SPEC = [sys.executable, "-c", "import sys; from spec_audits.cli import main; main(sys.argv[1:])"]


FLOOR = "python -c 'import lark, pydantic'"
CHECK = "spec check specs/triage.spec"


def _cpu() -> float:
    """CPU seconds (user and system) of every child this process waited for."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def cached_bytecode(pycache: str) -> dict[str, str]:
    """The environment of every measured command: Python's bytecode cached in `pycache`, as an installed spec
    has it, even where the host sets PYTHONDONTWRITEBYTECODE (otherwise each `spec` command would compile its
    ~60 modules from source every time while lark and pydantic load their installed caches)."""
    env = {name: value for name, value in os.environ.items() if name != "PYTHONDONTWRITEBYTECODE"}
    return {**env, "PYTHONPYCACHEPREFIX": pycache}


def measure(cases: dict[str, list[str]], rounds: int, env: dict[str, str]) -> dict[str, tuple[float, float]]:
    """Each case's median wall and median CPU seconds over `rounds` runs after one unmeasured run (which
    writes the bytecode caches), the cases taking turns within each round, so that a change in the
    machine's load during the run weighs on every case alike."""
    walls: dict[str, list[float]] = {name: [] for name in cases}
    cpus: dict[str, list[float]] = {name: [] for name in cases}
    for command in cases.values():
        subprocess.run(command, cwd=ROOT, check=True, capture_output=True, env=env)
    for _ in range(rounds):
        for name, command in cases.items():
            cpu, started = _cpu(), time.perf_counter()
            subprocess.run(command, cwd=ROOT, check=True, capture_output=True, env=env)
            walls[name].append(time.perf_counter() - started)
            cpus[name].append(_cpu() - cpu)
    return {name: (statistics.median(walls[name]), statistics.median(cpus[name])) for name in cases}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    rounds = parser.parse_args().rounds
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([*SPEC, "compile", "specs/triage.spec", "-o", f"{tmp}/triage"], cwd=ROOT, check=True,
                       capture_output=True)
        cases = {
            "python -c pass": [sys.executable, "-c", "pass"],
            FLOOR: [sys.executable, "-c", "import lark, pydantic"],
            "spec --help": [*SPEC, "--help"],
            CHECK: [*SPEC, "check", "specs/triage.spec"],
            "spec show SUITE -n 1": [*SPEC, "show", f"{tmp}/triage", "-n", "1"],
        }
        figures = measure(cases, rounds, cached_bytecode(f"{tmp}/pycache"))
    bare = figures["python -c pass"][0]
    for name, (seconds, cpu) in figures.items():
        print(f"{name:36} {seconds:6.3f} s wall ({seconds / bare:4.1f}x a bare interpreter), {cpu:6.3f} s CPU")
    ratio = figures[CHECK][1] / figures[FLOOR][1]
    print(f"{CHECK} / {FLOOR}: {ratio:.2f}x CPU (target: at most 1.5x); load average {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
