"""Z3 certificates: a stored puzzle's clues have exactly one model over its declared domain.

The check is the brief's: sat, read the model, compare it with the stored solution, block it, unsat.
Every call carries a timeout; running out of time is a PuzzleError, never a silent pass.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from functools import lru_cache
from typing import Any

import z3

from compiler.puzzles.clues import At, Binary, Clue, Count, Lit, Pair, Same, Unary, from_json
from compiler.puzzles.model import PuzzleError

SOLVER = f"z3 {z3.get_version_string()}"


class Encoding:
    """Z3 variables of one puzzle: an Int per (person, attribute) holding a value index.

    Zebra grids use the same variables (person = position) plus all-different per attribute.
    """

    def __init__(self, puzzle: Mapping[str, Any]) -> None:
        self.people: list[str] = list(puzzle["people"])
        self.domain: dict[str, list[str]] = {a: list(v) for a, v in puzzle["domain"].items()}
        self.zebra = puzzle["family"] == "zebra"
        self.var = {(p, a): z3.Int(f"{a}@{p}") for p in self.people for a in self.domain}
        self.base: list[z3.BoolRef] = [
            z3.And(v >= 0, v < len(self.domain[a])) for (_, a), v in self.var.items()
        ]
        self._formulas: dict[Clue, z3.BoolRef] = {}
        if self.zebra:
            self.base += [z3.Distinct([self.var[(p, a)] for p in self.people]) for a in self.domain]

    @property
    def size(self) -> int:
        """Assignments in the declared domain."""
        if self.zebra:
            return math.factorial(len(self.people)) ** len(self.domain)
        return math.prod(len(v) for v in self.domain.values()) ** len(self.people)

    def clue(self, clue: Clue) -> z3.BoolRef:
        """The clue as a Z3 formula, memoised: a domain's solver sees the same clues again and again."""
        formula = self._formulas.get(clue)
        if formula is None:
            formula = self._formulas[clue] = self._formula(clue)
        return formula

    def _formula(self, clue: Clue) -> z3.BoolRef:
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
            holds = [self.holds_value(p, clue.attribute, clue.value) for p in self.people]
            return z3.Sum([z3.If(h, 1, 0) for h in holds]) == clue.n
        if isinstance(clue, At):
            at = self._position(clue.item.attribute, clue.item.value) == clue.position
            return at if clue.type == "at" else z3.Not(at)
        return self._pair(clue)

    def lit(self, lit: Lit) -> z3.BoolRef:
        return self.holds_value(lit.person, lit.attribute, lit.value)

    def holds_value(self, person: str, attribute: str, value: str) -> z3.BoolRef:
        return self.var[(person, attribute)] == self.domain[attribute].index(value)

    def _position(self, attribute: str, value: str) -> z3.ArithRef:
        """1-based position of the person holding the value (zebra)."""
        terms = [z3.If(self.holds_value(p, attribute, value), i + 1, 0) for i, p in enumerate(self.people)]
        return z3.Sum(terms)

    def _pair(self, clue: Pair) -> z3.BoolRef:
        a = self._position(clue.first.attribute, clue.first.value)
        b = self._position(clue.second.attribute, clue.second.value)
        relations = {
            "same": lambda: a == b,
            "not_same": lambda: a != b,
            "left_of": lambda: a < b,
            "directly_left": lambda: a + 1 == b,
            "next_to": lambda: z3.Or(a + 1 == b, b + 1 == a),
        }
        return relations[clue.type]()

    def is_solution(self, solution: Mapping[str, Mapping[str, str]]) -> z3.BoolRef:
        return z3.And([self.holds_value(p, a, solution[p][a]) for p in self.people for a in self.domain])

    def decode(self, model: z3.ModelRef) -> dict[str, dict[str, str]]:
        return {
            p: {a: self.domain[a][model.eval(self.var[(p, a)]).as_long()] for a in self.domain}
            for p in self.people
        }


def _check(solver: z3.Solver, what: str, timeout_ms: int) -> z3.CheckSatResult:
    result = solver.check()
    if result == z3.unknown:
        raise PuzzleError(f"Z3 could not {what} within {timeout_ms} ms ({solver.reason_unknown()})")
    return result


@lru_cache(maxsize=128)
def _encoding(puzzle_domain: str) -> tuple[Encoding, z3.Solver]:
    """One encoding and one solver (base constraints asserted) per domain, reused under push/pop."""
    encoding = Encoding(json.loads(puzzle_domain))
    solver = z3.SimpleSolver()
    solver.add(encoding.base)
    return encoding, solver


def certify(puzzle: Mapping[str, Any], timeout_ms: int) -> dict[str, Any]:
    """Prove the stored clues have exactly one model over the domain, equal to the stored solution.

    Returns the certificate facts; raises PuzzleError naming what failed."""
    key = json.dumps({k: puzzle[k] for k in ("family", "people", "domain")}, sort_keys=True)
    encoding, solver = _encoding(key)
    solver.set("timeout", timeout_ms)
    solver.push()
    try:
        solver.add([encoding.clue(from_json(c)) for c in puzzle["clues"]])
        if _check(solver, "find a model", timeout_ms) == z3.unsat:
            raise PuzzleError("the clues are contradictory: no assignment over the domain satisfies them all")
        model = encoding.decode(solver.model())
        if model != puzzle["solution"]:
            raise PuzzleError(f"the clues admit a model other than the stored solution: {model}")
        solver.add(z3.Not(encoding.is_solution(model)))
        if _check(solver, "prove uniqueness", timeout_ms) == z3.sat:
            raise PuzzleError(f"the clues admit a second model: {encoding.decode(solver.model())}")
    finally:
        solver.pop()
    return {"solution_count": 1, "solver": SOLVER, "domain_size": encoding.size, "checks": ["sat", "unsat"]}


def entails_identity(puzzle: Mapping[str, Any], clue: Clue, person: str, timeout_ms: int) -> bool:
    """Whether `clue` alone fixes every attribute of `person` to its solution values."""
    encoding = Encoding(puzzle)
    solver = z3.SimpleSolver()
    solver.set("timeout", timeout_ms)
    identity = z3.And(
        [encoding.holds_value(person, a, puzzle["solution"][person][a]) for a in encoding.domain]
    )
    solver.add(encoding.base + [encoding.clue(clue), z3.Not(identity)])
    return _check(solver, "check a clue against an identity", timeout_ms) == z3.unsat
