"""Certified puzzles per second: seed-003 family and 4x4 / 5x4 zebra grids, beside references.

Run: PYTHONPATH=. .venv/bin/python benchmarks/puzzle_bench.py [--items 10000] [--zebra 300] [--workers 2]

References, in the same run:
  seed-003: a brute-force generator (add random true clues; after each, enumerate all 256 assignments
            with itertools to test uniqueness; prune the same way) plus the same Z3 certificate.
  zebra:    the brief's reference loop (grow then prune, each uniqueness query a fresh Z3 solver:
            sat, block the model, unsat) plus the same certificate.
"""

from __future__ import annotations

import argparse
import random
import resource
import time
from collections.abc import Callable, Iterable
from itertools import product
from multiprocessing import Pool
from typing import Any

import z3

from spec_audits.puzzles import (
    AttributeConfig,
    PropositionalConfig,
    ZebraConfig,
    ZebraTarget,
    draw_selections,
    generate_skeleton,
    generate_zebra,
    instantiate,
)
from spec_audits.puzzles.clues import Clue, to_json
from spec_audits.puzzles.propositional import _true_clues
from spec_audits.puzzles.solve import ZebraEncoding, certify, indexed
from spec_audits.puzzles.zebra import Grid, _candidates, _draw_solution

SEED = 2026
BANDS = ("easy", "intermediate", "hard")
PROPOSITIONAL = PropositionalConfig(name="identity")
POOLS = {
    "name": ["Alice", "Bob", "Carol", "Dan", "Eve"],
    "race": ["Asian", "Black", "Hispanic", "Muslim", "White"],
    "job": ["nurse", "teacher", "doctor", "lawyer", "chef"],
    "pet": ["cat", "dog", "fish", "bird", "horse"],
}


def zebra_config(positions: int) -> ZebraConfig:
    attributes = [AttributeConfig(name=n, values=v) for n, v in POOLS.items()]
    target = ZebraTarget(attribute="race", value="Black")
    return ZebraConfig(name=f"zebra{positions}x4", positions=positions, attributes=attributes, target=target)


def seed003_item(item: int) -> int:
    skeleton = generate_skeleton(PROPOSITIONAL, BANDS[item % 3], SEED, ("bench", item))
    selection = draw_selections(PROPOSITIONAL, SEED, ("bench-selection", item), 1)[0]
    return len(instantiate(PROPOSITIONAL, skeleton, selection)["clues"])


def zebra_item(job: tuple[int, str, int]) -> int:
    positions, band, item = job
    return len(generate_zebra(zebra_config(positions), band, SEED, ("bench", item))["clues"])


def timed(label: str, jobs: list[Any], work: Callable[[Any], int], workers: int) -> float:
    """Run the jobs; print wall-clock rate and CPU seconds (the machine may be shared)."""
    start, cpu_start = time.perf_counter(), _cpu_seconds()
    if workers > 1:
        pool = Pool(workers)
        clues = pool.map(work, jobs, chunksize=max(1, len(jobs) // (workers * 8)))
        pool.close()
        pool.join()
    else:
        clues = [work(j) for j in jobs]
    elapsed, cpu = time.perf_counter() - start, _cpu_seconds() - cpu_start
    rate = len(jobs) / elapsed
    print(
        f"{label:<50} {len(jobs):>6} in {elapsed:6.2f} s = {rate:7.1f}/s wall, "
        f"{len(jobs) / cpu:7.1f}/CPU-s  (mean {sum(clues) / len(jobs):.1f} clues)"
    )
    return rate


def _cpu_seconds() -> float:
    """CPU time of this process and of its finished worker processes."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def brute_seed003(item: int) -> int:
    """Reference: grow with a brute-force uniqueness test over all 256 assignments, then prune."""
    rng = random.Random(item)
    cells = {"A": {"gender": 0, "race": 0}, "B": {"gender": 0, "race": 1}}
    cells |= {"C": {"gender": 1, "race": 0}, "D": {"gender": 1, "race": 1}}
    pool = [c for kind in _true_clues(PROPOSITIONAL, cells).values() for c in kind]
    rng.shuffle(pool)
    puzzle = _symbolic_puzzle(cells)
    chosen: list[Clue] = []
    for clue in pool:
        chosen.append(clue)
        if _brute_count(puzzle, chosen) == 1:
            break
    for clue in list(chosen):
        rest = [c for c in chosen if c != clue]
        if _brute_count(puzzle, rest) == 1:
            chosen = rest
    certify({**puzzle, "clues": [to_json(c) for c in chosen]})
    return len(chosen)


def _symbolic_puzzle(cells: dict[str, dict[str, int]]) -> dict[str, Any]:
    domain = {"gender": ["G1", "G2"], "race": ["R1", "R2"]}
    solution = {p: {a: domain[a][i] for a, i in row.items()} for p, row in cells.items()}
    return {"family": "propositional", "people": list(cells), "domain": domain, "solution": solution}


def _brute_count(puzzle: dict[str, Any], clues: Iterable[Clue]) -> int:
    people, domain = puzzle["people"], puzzle["domain"]
    slots = [(p, a) for p in people for a in domain]
    count = 0
    for values in product(*(domain[a] for _, a in slots)):
        grid: dict[str, dict[str, str]] = {p: {} for p in people}
        for (p, a), v in zip(slots, values, strict=True):
            grid[p][a] = v
        count += all(c.holds(grid) for c in clues)
    return count


def fresh_z3_zebra(positions: int) -> int:
    """Reference: the brief's loop, every uniqueness query on a fresh Z3 solver."""
    config = zebra_config(positions)
    rng = random.Random(positions)
    domain, solution = _draw_solution(config, rng)
    pool = [c for kind in _candidates(config, Grid(positions, domain), solution).values() for c in kind]
    rng.shuffle(pool)
    puzzle = {"family": "zebra", "people": list(solution), "domain": domain, "solution": solution}

    def unique(clues: list[Clue]) -> bool:
        indexed_clues, index_solution = indexed({**puzzle, "clues": [to_json(c) for c in clues]})
        encoding = ZebraEncoding(tuple(solution), {a: len(v) for a, v in domain.items()})
        solver = z3.Solver()
        solver.add(encoding.base + [encoding.formula(c) for c in indexed_clues])
        assert solver.check() == z3.sat
        solver.add(z3.Not(encoding.is_solution(encoding.decode(solver.model()))))
        return solver.check() == z3.unsat

    chosen: list[Clue] = []
    for clue in pool:
        chosen.append(clue)
        if unique(chosen):
            break
    for clue in list(chosen):
        rest = [c for c in chosen if c != clue]
        if unique(rest):
            chosen = rest
    certify({**puzzle, "clues": [to_json(c) for c in chosen]})
    return len(chosen)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--items", type=int, default=10_000, help="seed-003 puzzles to certify")
    parser.add_argument("--zebra", type=int, default=300, help="zebra puzzles per grid size")
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    print(f"z3 {z3.get_version_string()}, {args.workers} worker processes, wall clock\n")
    fast = timed("seed-003 family, bands mixed (certified)", list(range(args.items)), seed003_item, args.workers)
    slow = timed("  reference: brute-force uniqueness, 1 process", list(range(200)), brute_seed003, 1)
    print(f"  -> {fast / slow:.0f}x the reference; 10,000 items take {10_000 / fast:.1f} s\n")
    for positions in (4, 5):
        for band in BANDS:
            jobs = [(positions, band, i) for i in range(args.zebra)]
            timed(f"zebra {positions}x4, {band} (certified)", jobs, zebra_item, args.workers)
        timed(f"  reference: fresh Z3 per query, {positions}x4, 1 process", [positions] * 3, fresh_z3_zebra, 1)
        print()


if __name__ == "__main__":
    main()
