"""Start-up: wall and CPU time of `spec --help`, `spec check`, `spec show` (target under 0.5 s each), beside a
bare `python -c pass` and the floor of every spec command, `python -c "import lark, pydantic"`, measured in
the same run, median of --rounds. Issue 33's target: `spec check specs/triage.spec` within 1.5x the floor's
CPU time; the ratio is printed last.

Usage: python benchmarks/startup_bench.py [--rounds 7]
"""

from __future__ import annotations

import argparse
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


def measure(command: list[str], rounds: int) -> tuple[float, float]:
    """The median wall and median CPU seconds of `command` over `rounds` runs."""
    walls, cpus = [], []
    for _ in range(rounds):
        cpu, started = _cpu(), time.perf_counter()
        subprocess.run(command, cwd=ROOT, check=True, capture_output=True)
        walls.append(time.perf_counter() - started)
        cpus.append(_cpu() - cpu)
    return statistics.median(walls), statistics.median(cpus)


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
        figures = {name: measure(command, rounds) for name, command in cases.items()}
    bare = figures["python -c pass"][0]
    for name, (seconds, cpu) in figures.items():
        print(f"{name:36} {seconds:6.3f} s wall ({seconds / bare:4.1f}x a bare interpreter), {cpu:6.3f} s CPU")
    ratio = figures[CHECK][1] / figures[FLOOR][1]
    print(f"{CHECK} / {FLOOR}: {ratio:.2f}x CPU (target: at most 1.5x)")


if __name__ == "__main__":
    main()
