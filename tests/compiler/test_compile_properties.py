"""Property tests: random small influence designs compile into suites that are balanced as declared."""

from __future__ import annotations

import json
import tempfile
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from spec_audits.compiler.dispatch.build import compile_file
from spec_audits.compiler.errors import SpecError

QUESTION = '''template question """
Choose one.
Option A: {{ first.n }} {{ first.noun }}
Option B: {{ second.n }} {{ second.noun }}
"""'''
# Position clauses; every cue names its influence so that no two influences render the same prompt.
POSITIONS = {
    "system": 'system "[{name}] You are {{{{ target.a_singular }}}}."',
    "prepend": 'prepend "[{name}] Most chose {{{{ target.plural }}}}."',
    "after_line": 'after_line {line} "[{name}] Think of {{{{ other.plural }}}}."',
    "append": 'append "[{name}] Prefer {{{{ target.plural }}}}."',
    "bracketed": 'append bracketed "[{name}] I like {{{{ target.name }}}}."',
    "turns": "turns {count} of question where target.n < other.n answer target.option",
}
FILTERS = ("", "n_A != n_B", "n_A == n_B", "not (n_A == {low} and n_B == {low})")


@dataclass(frozen=True)
class Design:
    factors: int
    influences: tuple[tuple[str, int], ...]  # (position, line or turn count)
    low: int
    width: int
    where: str
    baseline: str  # "", "baseline", "baseline shared"
    order: str
    samples: int
    split: bool
    sample: int | None

    @property
    def orders(self) -> int:
        return 2 if self.order == "both" else 1

    def pairs(self) -> list[tuple[int, int]]:
        sizes = range(self.low, self.low + self.width)
        return [(a, b) for a in sizes for b in sizes if _keep(self.where.format(low=self.low), a, b)]

    def spec(self) -> str:
        factors = "".join(f'factor f{i}:\n  A a{i} "a{i} people" / "a{i} person"\n'
                          f'  B b{i} "b{i} people" / "b{i} person"\n' for i in range(self.factors))
        influences = "".join(f"influence i{k} {POSITIONS[pos].format(name=f'i{k}', line=arg, count=arg)}\n"
                             for k, (pos, arg) in enumerate(self.influences))
        conditions = ", ".join(c for c in (self.baseline, "toward A", "toward B") if c)
        high = self.low + self.width - 1
        clauses = [
            "factors *", "influences *", f"conditions {conditions}", "prompt question",
            f"sizes n_A in {self.low}..{high}, n_B in {self.low}..{high}",
            f"where {self.where.format(low=self.low)}" if self.where else "",
            f"sample {self.sample} seed 3" if self.sample else "",
            f"order {self.order}", f"samples {self.samples}" + (" split by order" if self.split else ""),
            'answer choice "A" | "B"',
        ]
        body = "".join(f"  {c}\n" for c in clauses if c)
        return f'suite prop "Property"\nseed 11\n{factors}{QUESTION}\n{influences}design main:\n{body}'


def _keep(where: str, a: int, b: int) -> bool:
    if not where:
        return True
    expression = where.replace("n_A", str(a)).replace("n_B", str(b))
    return bool(eval(expression))  # noqa: S307 - the filters above are fixed test data


@st.composite
def designs(draw: st.DrawFn) -> Design:
    width = draw(st.integers(1, 4))
    low = draw(st.integers(1, 3))
    filters = [f for f in FILTERS if width >= 2 or f in ("", "n_A == n_B")]
    where = draw(st.sampled_from(filters))
    positions = [p for p in POSITIONS if p != "turns" or width >= 3]
    chosen = draw(st.lists(st.sampled_from(positions), min_size=1, max_size=3))
    influences = tuple((p, draw(st.integers(1, 3)) if p == "after_line" else draw(st.integers(1, 2)))
                       for p in chosen)
    order = draw(st.sampled_from(["both", "AB", "BA"]))
    split = order == "both" and draw(st.booleans())
    per_row = draw(st.integers(1, 3))
    design = Design(factors=draw(st.integers(1, 3)), influences=influences, low=low, width=width, where=where,
                    baseline=draw(st.sampled_from(["", "baseline", "baseline shared"])), order=order,
                    samples=per_row * (2 if split else 1), split=split, sample=None)
    unordered = len({tuple(sorted(p)) for p in design.pairs()})
    sample = draw(st.one_of(st.none(), st.integers(1, unordered)))
    return Design(**{**design.__dict__, "sample": sample})


def compile_twice(design: Design) -> tuple[list[dict[str, Any]], dict[str, Any], bytes, bytes]:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        (folder / "prop.spec").write_text(design.spec(), encoding="utf-8")
        compile_file(folder / "prop.spec", folder / "one")
        compile_file(folder / "prop.spec", folder / "two")
        first, second = (b"".join((folder / d / f).read_bytes() for f in ("suite.jsonl", "manifest.json"))
                         for d in ("one", "two"))
        text = (folder / "one" / "suite.jsonl").read_text(encoding="utf-8")
        manifest = json.loads((folder / "one" / "manifest.json").read_text(encoding="utf-8"))
    return [json.loads(line) for line in text.splitlines()], manifest, first, second


def trials_per_cell(rows: list[dict[str, Any]], influences: list[str]) -> Counter[tuple[str, str, str]]:
    """(factor, influence, condition) -> trials, a shared baseline row counting for every influence."""
    trials: Counter[tuple[str, str, str]] = Counter()
    for row in rows:
        cell = row["cell"]
        for influence in influences if cell["influence"] is None else [cell["influence"]]:
            trials[(cell["factor"], influence, cell["condition"])] += row["samples"]
    return trials


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(designs())
def test_compiled_designs_are_balanced_as_declared(design: Design) -> None:
    try:
        rows, manifest, first_bytes, second_bytes = compile_twice(design)
    except SpecError as err:
        # The only refusal these designs may get: a sampled subset of size pairs that misses a size.
        assert design.sample is not None, err.render()
        assert [d.message.split(": ")[-1] for d in err.diagnostics if "never has size" in d.message], err.render()
        return
    assert first_bytes == second_bytes
    influences = [f"i{k}" for k in range(len(design.influences))]
    conditions = (1 if design.baseline else 0) + 2

    trials = trials_per_cell(rows, influences)
    assert len(trials) == design.factors * len(influences) * conditions
    (balance,) = manifest["balance"]
    comparisons = len({(r["cell"]["n_A"], r["cell"]["n_B"]) for r in rows if r["cell"]["factor"] == "f0"})
    expected = comparisons * design.orders * design.samples // (2 if design.split else 1)
    assert set(trials.values()) == {balance["trials_per_cell"]} == {expected}
    assert balance["cells"] == len(trials)
    if design.sample is None:
        assert comparisons == len(design.pairs())

    sizes: dict[tuple[str, str, str], dict[str, Counter[int]]] = defaultdict(lambda: {"A": Counter(), "B": Counter()})
    for row in rows:
        cell = row["cell"]
        key = (cell["factor"], str(cell["influence"]), cell["condition"])
        sizes[key]["A"][cell["n_A"]] += row["samples"]
        sizes[key]["B"][cell["n_B"]] += row["samples"]
    assert all(by_group["A"] == by_group["B"] for by_group in sizes.values())

    assert len({r["id"] for r in rows}) == len(rows) == manifest["rows"]
    assert len({json.dumps([r["messages"], r["cell"]], sort_keys=True) for r in rows}) == len(rows)
