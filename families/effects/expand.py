"""The rows of an effects design: every scenario under every combination of levels the crossing keeps, in
every condition; or, with `trials N per cell`, N seeded (scenario, replicate) trials of every cell."""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Iterator
from typing import Any

from spec_audits.families.effects.crossing import Run
from spec_audits.families.effects.design import CORRECT, Condition, EffectsInput, Scenario, outcomes
from spec_audits.sdk import Diagnostic, Plan, Record, Span, SpecError, canonical_json, field, spread

Cell = tuple[Run, str]  # (combination, condition)


class CompiledEffects(Record, frozen=False):
    """An effects design with its combinations fixed and their balance proved."""

    design: EffectsInput
    runs: list[Run]
    crossing: dict[str, Any]  # the balance record (crossing.prove) manifest.json keeps
    picks: dict[Cell, Counter[int]] | None = None  # `trials N per cell`: per cell, samples drawn per scenario
    shared: dict[str, str] = field(default_factory=dict)
    served: dict[str, list[Any]] = field(default_factory=dict)

    @property
    def name(self) -> str:
        return self.design.name

    @property
    def span(self) -> Span:
        return self.design.span

    @property
    def mode(self) -> str:
        return self.design.mode

    @property
    def balance_keys(self) -> tuple[str, ...]:
        """Every declared factor and the condition: --limit and trials per cell stratify over all of them."""
        return (*(factor.name for factor in self.design.factors), "condition")

    @property
    def own_analysis(self) -> tuple[str, ...]:
        """The answer form: designs of one suite may ask the same scenarios in different forms, each scored
        apart (manifest.analysis then records each design's answer under `designs`)."""
        return ("answer",)

    @property
    def analysis(self) -> dict[str, Any]:
        design = self.design
        named = {"outcome": design.outcome} if design.correct is not None and design.outcome != CORRECT else {}
        return {"family": "effects", "answer": design.answer.record(), "correct": design.correct is not None, **named,
                "factors": [{"name": f.name, "levels": list(f.names), "reference": f.reference,
                             "texts": {level.name: level.text for level in f.levels}} for f in design.factors],
                "conditions": [c.name for c in design.conditions], "crossing": self.crossing,
                **design.analysis.record()}

    def summary(self) -> str:
        design = self.design
        shape = " x ".join(str(len(f.levels)) for f in design.factors)
        kind = "full cross" if design.crossing.kind == "full" else "balanced fraction"
        crossed = f"{len(self.runs)} combinations ({kind} of {shape} levels)" if shape else "no factors"
        return (f"{len(design.scenarios)} scenarios x {crossed} x "
                f"{len(design.conditions)} condition{'s' if len(design.conditions) != 1 else ''}, answer "
                f"{design.answer.kind}")

    def rows(self) -> Iterator[dict[str, Any]]:
        for index in range(len(self.design.scenarios)):
            yield from self._scenario_rows(index)

    def planned(self) -> Plan:
        design = self.design
        if self.picks is not None:
            return Plan(sum(len(c) for c in self.picks.values()), sum(sum(c.values()) for c in self.picks.values()))
        rows = len(design.scenarios) * len(self.runs) * len(design.conditions)
        return Plan(rows, rows * design.samples)

    def sample(self, groups: int) -> Iterator[dict[str, Any]]:
        """The rows of a few scenarios, each under every combination and condition."""
        for index in spread(len(self.design.scenarios), groups):
            yield from self._scenario_rows(index)

    def _scenario_rows(self, index: int) -> Iterator[dict[str, Any]]:
        design = self.design
        scenario = design.scenarios[index]
        for run in self.runs:
            context: dict[str, Any] = {"scenario": scenario.values}
            for factor, level in zip(design.factors, run, strict=True):
                context[factor.name] = factor.levels[level].context()
            answers = self._answers(context)
            for condition in design.conditions:
                samples = self._samples(run, condition.name, index)
                if samples:
                    yield self._row(scenario, run, condition, {**context, "condition": condition.name}, answers,
                                    samples)

    def _samples(self, run: Run, condition: str, scenario: int) -> int:
        if self.picks is None:
            return self.design.samples
        return self.picks[(run, condition)].get(scenario, 0)

    def _answers(self, context: dict[str, Any]) -> dict[str, str]:
        """Token -> outcome: the token itself, or correct/incorrect where the design names the correct token."""
        tokens = self.design.answer.tokens
        if self.design.correct is None:
            return {token: token for token in tokens}
        right = self.design.correct.render(context).strip()
        if right not in tokens:
            text = self.design.correct.text
            raise SpecError([Diagnostic(text.span, f"the correct answer renders as {right!r} for scenario "
                                        f"{context['scenario']!r}, which is no answer token ({', '.join(tokens)})",
                                        "make the correct template give one of the answer tokens")])
        hit, miss = outcomes(self.design.outcome)
        return {token: hit if token == right else miss for token in tokens}

    def _row(self, scenario: Scenario, run: Run, condition: Condition, context: dict[str, Any],
             answers: dict[str, str], samples: int) -> dict[str, Any]:
        design = self.design
        cell: dict[str, Any] = {"scenario": scenario.key, "condition": condition.name}
        for factor, level in zip(design.factors, run, strict=True):
            cell[factor.name] = factor.levels[level].name
        return {"messages": _messages(design, condition, context), "samples": samples, "cell": cell,
                "answers": answers, "decode": design.decode}


def _messages(design: EffectsInput, condition: Condition, context: dict[str, Any]) -> list[dict[str, Any]]:
    """The system prompt (if any) and the question, the condition's instruction placed where it says."""
    system = design.system.render(context) if design.system is not None else None
    question = design.prompt.render(context)
    if condition.text is not None:
        instruction = condition.text.render(context)
        if condition.position == "system":
            system = instruction if system is None else f"{system}\n\n{instruction}"
        elif condition.position == "prepend":
            question = f"{instruction}\n\n{question}"
        else:
            question = f"{question}\n\n{instruction}"
    head = [{"role": "system", "content": system}] if system is not None else []
    return [*head, {"role": "user", "content": question}]


def pick_trials(design: EffectsInput, runs: list[Run]) -> dict[Cell, Counter[int]]:
    """`trials N per cell [seed S]`: in every (combination, condition) cell, the N of its (scenario, replicate)
    trials ranked first by a hash of (seed, cell, scenario key, replicate); per cell, samples per scenario."""
    assert design.trials is not None
    count, seed = design.trials
    picks: dict[Cell, Counter[int]] = {}
    for run in runs:
        for condition in design.conditions:
            ranked = sorted(
                (_rank(seed, run, condition.name, scenario.key, replicate), index)
                for index, scenario in enumerate(design.scenarios) for replicate in range(design.samples))
            picks[(run, condition.name)] = Counter(index for _, index in ranked[:count])
    return picks


def _rank(seed: int, run: Run, condition: str, scenario: str, replicate: int) -> bytes:
    return hashlib.sha256(canonical_json([seed, list(run), condition, scenario, replicate]).encode()).digest()[:8]
