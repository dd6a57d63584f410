"""Start-up: wall and CPU time of `spec --help`, `spec check`, `spec show` (target under 0.5 s each), beside a
bare `python -c pass` and the floor of every spec command, `python -c "import lark, pydantic"`, measured in
the same run, median of --rounds. Issue 33's target: `spec check specs/triage.spec` within 1.5x the floor's
CPU time; the ratio is printed last. The cases take turns within each round, so a change of load during the run
weighs on all of them alike.

Measured (issue 33 item 3) on the shared 2-core Xeon, median of 7 interleaved rounds, main (29dad5c) and this change
side by side in one run at load average 6.0-6.8, CPU seconds: `python -c pass` 0.019, the floor 0.084; `spec check
specs/triage.spec` 0.395 on main (4.72x the floor) and 0.348 after (4.15x); `spec show SUITE -n 1` 0.718 (0.77 s
wall) and 0.411 (0.60 s wall); `spec --help` 0.047 and 0.045. Alone (load about 4), `spec show` took 0.35 s CPU and
0.36 s wall after. Earlier, alone at load 2.9-3.8, this script gave main 0.357 s CPU for check (4.95x a 0.072 s
floor) and 0.633 s CPU, 1.66 s wall for show (the issue's figures: 0.338 s, 4.83x; 0.71 s CPU, 0.58 s wall). What
the change removed from `spec check`: the row and manifest models and the suite reader (never imported:
tests/compiler/test_lazy_families.py), the AST as pydantic models (34 classes and their schemas, about 45 ms at low
load), and lark's parser pickle in /tmp (now in the user cache folder, compiler/parser_cache.py). From `spec show`:
the compile stages, numpy, and 45,000 terminal scrubs of the same few cell texts. What is left of check's CPU at low
load (0.275 s in-process): pydantic's BaseModel machinery for the families' analysis records (~35 ms), our ~60
modules' classes and dataclasses (~100 ms), jinja2 (12 ms), click (6 ms), lark loading the saved tables and
compiling one scanner regex per parser state (~35 ms), the checks and the budget's 240 sampled rows (~25 ms). 1.5x
(0.11 s) would need the family records and the compile stages' dataclasses built on first use, and lark's scanners
cached; not done.

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


def measure(cases: dict[str, list[str]], rounds: int) -> dict[str, tuple[float, float]]:
    """Each case's median wall and median CPU seconds over `rounds` runs, the cases taking turns within each
    round, so that a change in the machine's load during the run weighs on every case alike."""
    walls: dict[str, list[float]] = {name: [] for name in cases}
    cpus: dict[str, list[float]] = {name: [] for name in cases}
    for _ in range(rounds):
        for name, command in cases.items():
            cpu, started = _cpu(), time.perf_counter()
            subprocess.run(command, cwd=ROOT, check=True, capture_output=True)
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
        figures = measure(cases, rounds)
    bare = figures["python -c pass"][0]
    for name, (seconds, cpu) in figures.items():
        print(f"{name:36} {seconds:6.3f} s wall ({seconds / bare:4.1f}x a bare interpreter), {cpu:6.3f} s CPU")
    ratio = figures[CHECK][1] / figures[FLOOR][1]
    print(f"{CHECK} / {FLOOR}: {ratio:.2f}x CPU (target: at most 1.5x); load average {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
