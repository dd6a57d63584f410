"""How fast `spec check` reports many misspelt names: N factors and N misspelt references to them, with the
"did you mean" hint scoring the 40 candidates nearest in length (compiler/errors.py MAX_SCORED) beside the
same check scoring every candidate. Figures, not a test: tests/compiler/test_bounded_specs.py checks what
is reported, this prints how long it takes (CPU seconds of this process, median of --rounds).

    .venv/bin/python benchmarks/check_bench.py [--names 1000] [--rounds 3]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from spec_audits.compiler import errors  # noqa: E402
from spec_audits.compiler.dispatch.build import check_file  # noqa: E402
from spec_audits.compiler.errors import SpecError  # noqa: E402

BODY = '''suite many "Many misspelt names"
seed 1
{factors}template question "{{{{ first.n }}}} {{{{ first.noun }}}} or {{{{ second.n }}}} {{{{ second.noun }}}}"
influence nudge append "Choose {{{{ target.plural }}}}."
design main:
  factors {misspelt}
  influences *
  conditions baseline, toward A, toward B
  sizes n_A in 1..2, n_B in 1..2
  order both
  answer choice "A" | "B"
'''


def spec(names: int) -> str:
    factors = "".join(f'factor color{i}:\n  A red{i} "r" / "r"\n  B blue{i} "b" / "b"\n' for i in range(names))
    return BODY.format(factors=factors, misspelt=", ".join(f"colr{i}x" for i in range(names)))


def cpu_seconds(path: Path, rounds: int) -> tuple[float, int]:
    times, found = [], 0
    for _ in range(rounds):
        started = time.process_time()
        try:
            check_file(path)
        except SpecError as err:
            found = len(err.diagnostics)
        times.append(time.process_time() - started)
    return statistics.median(times), found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--names", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "many.spec"
        path.write_text(spec(args.names), encoding="utf-8")
        nearest, found = cpu_seconds(path, args.rounds)
        kept = errors.MAX_SCORED
        errors.MAX_SCORED = 10**9  # score every candidate
        try:
            every, _ = cpu_seconds(path, args.rounds)
        finally:
            errors.MAX_SCORED = kept
    print(f"{args.names:,} misspelt names, {found:,} errors reported")
    print(f"  nearest {kept} candidates scored: {nearest:7.2f} s CPU")
    print(f"  every candidate scored:      {every:7.2f} s CPU   ratio {every / nearest:.1f}x")


if __name__ == "__main__":
    main()
