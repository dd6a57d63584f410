"""Z3 certificates: a stored puzzle's clues have exactly one model over its declared domain.

The check is the brief's: sat, read the model, compare it with the stored solution, block it, unsat.
Every check carries a resource limit (Z3's `rlimit`, which counts solver steps, not time), so whether
a puzzle certifies is the same on a busy machine as on an idle one; running out is a PuzzleError
naming the puzzle, never a silent pass.

Values are encoded by their index in the declared domain, so puzzles of the same shape (people,
attributes, values per attribute) share one encoding and one solver, used under push/pop.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from functools import lru_cache
from typing import Any

import z3

from spec_audits.puzzles.clues import At, Binary, Clue, Count, Item, Lit, Pair, Same, Unary, from_json, relabel
from spec_audits.puzzles.model import PuzzleError

SOLVER = f"z3 {z3.get_version_string()}"
# Z3 steps one check may take (the limit is per check, not cumulative). The shipped cue-visibility
# suite's heaviest check takes about 900, an 8x6 zebra grid's about 1,000,000; 50,000,000 is some
# seconds of one core, a bound on a runaway check rather than a setting a spec should need.
RLIMIT = 50_000_000
Shape = tuple[str, tuple[str, ...], tuple[tuple[str, int], ...]]  # (family, people, (attribute, size))
IndexSolution = dict[str, dict[str, int]]


class PropositionalEncoding:
    """An Int per (person, attribute) holding the value's index."""

    def __init__(self, people: tuple[str, ...], sizes: dict[str, int]) -> None:
        self.people, self.sizes = people, sizes
        self.var = {(p, a): z3.Int(f"{a}@{p}") for p in people for a in sizes}
        self.base = [z3.And(v >= 0, v < sizes[a]) for (_, a), v in self.var.items()]
        self.size = math.prod(sizes.values()) ** len(people)

    def formula(self, clue: Clue) -> z3.BoolRef:
        if isinstance(clue, Unary):
            return self.lit(clue.lit) if clue.type == "direct" else z3.Not(self.lit(clue.lit))
        if isinstance(clue, Binary):
            x, y = self.lit(clue.left), self.lit(clue.right)
            connectives = {"conjunction": z3.And, "disjunction": z3.Or, "implication": z3.Implies}
            return connectives.get(clue.type, lambda a, b: a == b)(x, y)
        if isinstance(clue, Same):
            p, q = clue.people
            return self.var[(p, clue.attribute)] == self.var[(q, clue.attribute)]
        if isinstance(clue, Count):
            holds = [self.var[(p, clue.attribute)] == int(clue.value) for p in self.people]
            return z3.Sum([z3.If(h, 1, 0) for h in holds]) == clue.n
        raise PuzzleError(f"clue type {clue.type!r} does not belong to a propositional puzzle")

    def lit(self, lit: Lit) -> z3.BoolRef:
        return self.var[(lit.person, lit.attribute)] == int(lit.value)

    def is_solution(self, solution: IndexSolution) -> z3.BoolRef:
        """The (possibly partial) assignment holds."""
        return z3.And([self.var[(p, a)] == i for p, row in solution.items() for a, i in row.items()])

    def decode(self, model: z3.ModelRef) -> IndexSolution:
        return {p: {a: model.eval(self.var[(p, a)]).as_long() for a in self.sizes} for p in self.people}


class ZebraEncoding:
    """An Int per (attribute, value index) holding its 1-based position; all-different per attribute."""

    def __init__(self, people: tuple[str, ...], sizes: dict[str, int]) -> None:
        self.people, self.sizes = people, sizes
        n = len(people)
        self.pos = {(a, i): z3.Int(f"{a}#{i}") for a, k in sizes.items() for i in range(k)}
        self.base = [z3.And(v >= 1, v <= n) for v in self.pos.values()]
        self.base += [z3.Distinct([self.pos[(a, i)] for i in range(k)]) for a, k in sizes.items()]
        self.size = math.factorial(n) ** len(sizes)

    def formula(self, clue: Clue) -> z3.BoolRef:
        if isinstance(clue, At):
            at = self._at(clue.item) == clue.position
            return at if clue.type == "at" else z3.Not(at)
        if not isinstance(clue, Pair):
            raise PuzzleError(f"clue type {clue.type!r} does not belong to a zebra puzzle")
        a, b = self._at(clue.first), self._at(clue.second)
        relations = {
            "same": lambda: a == b,
            "not_same": lambda: a != b,
            "left_of": lambda: a < b,
            "directly_left": lambda: a + 1 == b,
            "next_to": lambda: z3.Or(a + 1 == b, b + 1 == a),
        }
        return relations[clue.type]()

    def _at(self, item: Item) -> z3.ArithRef:
        return self.pos[(item.attribute, int(item.value))]

    def is_solution(self, solution: IndexSolution) -> z3.BoolRef:
        """The (possibly partial) assignment holds."""
        where = {p: k + 1 for k, p in enumerate(self.people)}
        return z3.And([self.pos[(a, i)] == where[p] for p, row in solution.items() for a, i in row.items()])

    def decode(self, model: z3.ModelRef) -> IndexSolution:
        where = {(a, model.eval(v).as_long()): i for (a, i), v in self.pos.items()}
        return {p: {a: where[(a, k + 1)] for a in self.sizes} for k, p in enumerate(self.people)}


class Certifier:
    """One encoding and one solver (base constraints asserted) for one puzzle shape."""

    def __init__(self, shape: Shape) -> None:
        family, people, sizes = shape
        kind = ZebraEncoding if family == "zebra" else PropositionalEncoding
        self.encoding = kind(people, dict(sizes))
        self.solver = z3.SimpleSolver()
        self.solver.add(self.encoding.base)
        self._formulas: dict[Clue, z3.BoolRef] = {}

    def formula(self, clue: Clue) -> z3.BoolRef:
        """Memoised: the shape's solver sees the same clues again and again."""
        if clue not in self._formulas:
            self._formulas[clue] = self.encoding.formula(clue)
        return self._formulas[clue]

    def limited(self, rlimit: int | None) -> tuple[z3.Solver, int]:
        """The shape's solver with each check limited to `rlimit` steps (None: RLIMIT), and the limit."""
        limit = RLIMIT if rlimit is None else rlimit
        self.solver.set("rlimit", limit)
        return self.solver, limit

    def unique(self, clues: list[Clue], solution: IndexSolution, rlimit: int | None) -> None:
        """sat, model == solution, block it, unsat; a PuzzleError (in index terms) otherwise."""
        solver, rlimit = self.limited(rlimit)
        solver.push()
        try:
            solver.add([self.formula(c) for c in clues])
            if _check(solver, "find a model", rlimit) == z3.unsat:
                raise PuzzleError("the clues are contradictory: no assignment in the domain satisfies them all")
            model = self.encoding.decode(solver.model())
            if model != solution:
                raise _Divergent(model)
            solver.add(z3.Not(self.encoding.is_solution(model)))
            if _check(solver, "prove uniqueness", rlimit) == z3.sat:
                raise _Divergent(self.encoding.decode(solver.model()))
        finally:
            solver.pop()

    def entails(self, clue: Clue, facts: IndexSolution, rlimit: int | None) -> bool:
        """Whether the clue alone (with the domain) forces the partial assignment `facts`."""
        solver, rlimit = self.limited(rlimit)
        solver.push()
        try:
            solver.add(self.formula(clue), z3.Not(self.encoding.is_solution(facts)))
            return _check(solver, "check what one clue entails", rlimit) == z3.unsat
        finally:
            solver.pop()


class _Divergent(Exception):
    def __init__(self, model: IndexSolution) -> None:
        self.model = model


@lru_cache(maxsize=64)
def certifier_for(shape: Shape) -> Certifier:
    return Certifier(shape)


class _OutOfSteps(PuzzleError):
    """A Z3 check that ran out of its resource limit."""


def _check(solver: z3.Solver, what: str, rlimit: int) -> z3.CheckSatResult:
    result = solver.check()
    if result == z3.unknown:
        reason = solver.reason_unknown()  # "canceled" when the step limit is reached
        said = "" if reason == "canceled" else f"; Z3 says {reason!r}"
        raise _OutOfSteps(f"Z3 could not {what} within its step limit (rlimit {rlimit:,}: a count of solver work, "
                          f"not of time{said})")
    return result


def shape_of(puzzle: Mapping[str, Any]) -> Shape:
    sizes = tuple((a, len(values)) for a, values in puzzle["domain"].items())
    return (puzzle["family"], tuple(puzzle["people"]), sizes)


def indexed(puzzle: Mapping[str, Any]) -> tuple[list[Clue], IndexSolution]:
    """The puzzle's clues and solution with every value replaced by its index in the domain."""
    domain: Mapping[str, list[str]] = puzzle["domain"]
    try:
        clues = [relabel(from_json(c), lambda a, v: str(domain[a].index(v))) for c in puzzle["clues"]]
        solution = {p: {a: domain[a].index(v) for a, v in row.items()} for p, row in puzzle["solution"].items()}
    except (KeyError, ValueError, TypeError) as exc:
        raise PuzzleError(f"malformed puzzle: {exc!r} (a clue or the solution leaves the declared domain)") from exc
    return clues, solution


def certify(puzzle: Mapping[str, Any], rlimit: int | None = None) -> dict[str, Any]:
    """Prove the stored clues have exactly one model over the domain, equal to the stored solution,
    each Z3 check within `rlimit` solver steps (None: RLIMIT).

    Returns the certificate facts; raises PuzzleError naming what failed."""
    clues, solution = indexed(puzzle)
    certifier = certifier_for(shape_of(puzzle))
    try:
        certifier.unique(clues, solution, rlimit)
    except _OutOfSteps as err:
        raise PuzzleError(f"puzzle {puzzle.get('config')!r}: {err}") from None
    except _Divergent as other:
        domain = puzzle["domain"]
        named = {p: {a: domain[a][i] for a, i in row.items()} for p, row in other.model.items()}
        raise PuzzleError(f"the clues admit a model other than the stored solution: {named}") from None
    return {"solution_count": 1, "solver": SOLVER, "domain_size": certifier.encoding.size, "checks": ["sat", "unsat"]}
