"""Start-up: wall time of `spec --help`, `spec check`, `spec show` (target under 0.5 s each), beside a bare
`python -c pass` measured in the same run, median of --rounds.

Usage: python benchmarks/startup_bench.py [--rounds 7]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SPEC = [sys.executable, "-c", "import sys; from spec_audits.cli import main; main(sys.argv[1:])"]


def wall(command: list[str], rounds: int) -> float:
    times = []
    for _ in range(rounds):
        started = time.perf_counter()
        subprocess.run(command, cwd=ROOT, check=True, capture_output=True)
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    rounds = parser.parse_args().rounds
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([*SPEC, "compile", "specs/triage.spec", "-o", f"{tmp}/triage"], cwd=ROOT, check=True,
                       capture_output=True)
        cases = {
            "python -c pass": [sys.executable, "-c", "pass"],
            "spec --help": [*SPEC, "--help"],
            "spec check specs/triage.spec": [*SPEC, "check", "specs/triage.spec"],
            "spec show SUITE -n 1": [*SPEC, "show", f"{tmp}/triage", "-n", "1"],
        }
        figures = {name: wall(command, rounds) for name, command in cases.items()}
    bare = figures["python -c pass"]
    for name, seconds in figures.items():
        print(f"{name:32} {seconds:6.3f} s  ({seconds / bare:4.1f}x a bare interpreter)")


if __name__ == "__main__":
    main()
