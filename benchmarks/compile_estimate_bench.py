"""The compile budget's estimates against the compile itself, for every shipped spec (issue 15).

Prints figures (not a test). For each specs/*.spec, side by side in one run: `check_file` plans the size
and estimates the compile's CPU time from its sampled rows' counts (rows, bytes, template steps) at the
reference pace of compiler/budget.py, then `compile_file` compiles the spec into a scratch folder, timed
(CPU and wall), each in a fresh subprocess. The ratios are estimate / actual: the bytes should be within
25% (tests/compiler/test_compile_budget.py holds them to it); the time ratio is how well the reference
pace (fitted on an idle 2-core machine) fits this machine, and a busy machine's wall clock runs longer.

    .venv/bin/python benchmarks/compile_estimate_bench.py
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent


def child(kind: str, spec: Path) -> dict[str, Any]:
    """`check`: the planned size; `compile`: the compile's bytes and times. Each in its own process, so the
    compile pays every first-time cost (data files read, templates compiled) that the estimate counts."""
    from spec_audits.compiler.dispatch.build import check_file, compile_file

    if kind == "check":
        planned = check_file(spec).size
        assert planned is not None, f"{spec}: a shipped spec plans its size"
        return {"planned_bytes": planned.bytes, "estimate_s": planned.seconds, "sampled": planned.sampled,
                "rows": planned.rows}
    with tempfile.TemporaryDirectory() as tmp:
        cpu, wall = time.process_time(), time.perf_counter()
        compile_file(spec, Path(tmp) / "suite")
        cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
        return {"bytes": (Path(tmp) / "suite" / "suite.jsonl").stat().st_size, "cpu_s": cpu, "wall_s": wall}


def measure(spec: Path) -> dict[str, Any]:
    found: dict[str, Any] = {}
    for kind in ("check", "compile"):
        done = subprocess.run([sys.executable, __file__, "--child", kind, str(spec)], cwd=ROOT, check=True,
                              capture_output=True, text=True)
        found |= json.loads(done.stdout.strip().splitlines()[-1])
    return found


def main() -> None:
    if sys.argv[1:2] == ["--child"]:
        print(json.dumps(child(sys.argv[2], Path(sys.argv[3]))))
        return
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    print(f"{'spec':<24}{'rows':>8}{'sampled':>9}{'planned MB':>12}{'actual MB':>11}{'ratio':>7}"
          f"{'est. s':>8}{'CPU s':>7}{'ratio':>7}{'wall s':>8}")
    for spec in sorted((ROOT / "specs").glob("*.spec")):
        m = measure(spec.relative_to(ROOT))
        print(f"{spec.name:<24}{m['rows']:>8,}{m['sampled']:>9,}{m['planned_bytes'] / 1e6:>12.2f}"
              f"{m['bytes'] / 1e6:>11.2f}{m['planned_bytes'] / m['bytes']:>7.2f}{m['estimate_s']:>8.2f}"
              f"{m['cpu_s']:>7.2f}{m['estimate_s'] / m['cpu_s']:>7.2f}{m['wall_s']:>8.2f}")


if __name__ == "__main__":
    main()
