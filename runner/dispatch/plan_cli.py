"""`spec plan`: what a design can detect before paying for it, and what a target effect would cost.

For every statistic of the design (as its family declares their variances, Family.variances) the minimum
detectable effect at the suite's current size; with --effect, how many times the scenarios or the samples
per cell it takes to find that effect with the asked power, and logprob mode's figure for a sampled design;
the calls and price of each option at the live and the batch rate, from the tables `spec run --dry-run`
uses. Each statistic is held to BH's first threshold over all of them (spec_audits/stats/power.py).
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path

import click

from spec_audits.base.terminal import echo
from spec_audits.compiler.dispatch.build import compile_file
from spec_audits.compiler.errors import SpecError
from spec_audits.contract.reader import ContractError, Suite, check_suite_integrity, read_run, read_suite
from spec_audits.dispatch import registry
from spec_audits.runner.batch.cli import batch_cost
from spec_audits.runner.plan import Estimate, estimate, plan
from spec_audits.runner.run_config import DEFAULT_MODEL
from spec_audits.runner.score_input import check_run_analysis, run_family
from spec_audits.stats.power import Variance, bh_level, mde, needed, pool_icc

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # prices from the installed map, as spec run's
UNIT = click.FloatRange(0, 1, min_open=True, max_open=True)


@dataclass(frozen=True)
class Price:
    """Calls and price of the suite as it stands, in its own mode, and of one call per row (logprob)."""

    calls: int
    rows: int
    live: float | None
    batch: float | None

    def of(self, calls: int) -> str:
        if self.live is None or self.batch is None or self.calls == 0:
            return f"{calls:,} calls, price unknown (not in litellm's cost map)"
        share = calls / self.calls
        return f"{calls:,} calls, ${self.live * share:,.4f} live, ${self.batch * share:,.4f} in batches"


@contextmanager
def _suite(target: Path) -> Iterator[Suite]:
    """The suite folder, or the spec compiled into a temporary folder (removed afterwards)."""
    if target.is_dir():
        suite = read_suite(target)
        check_suite_integrity(suite)
        yield suite
        return
    with tempfile.TemporaryDirectory(prefix="spec-plan-") as folder:
        try:
            _, out = compile_file(target, Path(folder) / "suite")
        except SpecError as err:  # every mistake, located in the spec, as `spec compile` shows them
            raise click.ClickException(err.render()) from None
        yield read_suite(out)


def _price(suite: Suite, model: str) -> Price:
    mode = suite.manifest.mode
    found = estimate(plan(suite.rows, mode=mode), mode=mode, model=model, judge_model=None)
    return Price(found[0].calls, len(suite.rows), _total([e.cost_usd for e in found]),
                 _total([_batch(e) for e in found]))


def _total(prices: list[float | None]) -> float | None:
    """The sum, or None when any price is unknown."""
    known = [price for price in prices if price is not None]
    return sum(known) if len(known) == len(prices) else None


def _batch(entry: Estimate) -> float | None:
    """The batch price: the live one for the embedded model (free), None where no batch rate is known."""
    if entry.model.startswith("local/"):
        return entry.cost_usd
    try:
        return batch_cost(entry)
    except Exception:  # noqa: BLE001 - litellm raises assorted errors for a model without a batch provider
        return None


def _variances(suite: Suite, target: Path, pilot: Path | None, icc: float) -> list[Variance]:
    name = str((suite.manifest.analysis or {}).get("family", ""))
    family = registry.get(name)
    if family is None or family.variances is None:
        why = "is unknown to this version" if family is None else "declares no variances (Family.variances)"
        raise ContractError(target, f"its design's analysis family '{name}' {why}, so spec plan cannot size it",
                            fix="plan a design of a family that declares them (docs/scoring.md, \"Planning a study\")")
    if pilot is not None:
        if run_family(pilot, registry.DEFAULT) != family.name:
            raise ContractError(pilot / "run.json", f"is not a run of a {family.name} design",
                                fix="give --pilot a run of this suite (spec run SUITE --limit N)")
        check_run_analysis(pilot, family.record_type())
        _, piloted = read_run(pilot)
        if piloted.manifest.analysis != suite.manifest.analysis:
            raise ContractError(pilot / "run.json", f"is a run of {piloted.path}, whose design's analysis differs "
                                f"from {target}'s", fix="give --pilot a run of the suite you plan")
    found = pool_icc(family.variances(suite, pilot, icc))
    if not found:
        raise ContractError(target, "its design has no statistic to plan (one level per factor, no intervention)")
    return found


def _row(v: Variance, level: float, power: float, effect: float | None) -> str:
    line = (f"  {v.statistic}: n {v.n1:,} vs {v.n0:,} in {v.clusters:,} clusters, icc {v.icc:.3f}, "
            f"design effect {v.design_effect():.2f}, SE {v.se():.4f}, MDE {mde(v, level, power):.4f}")
    if effect is None:
        return line
    k = needed(v, effect, level, power, "scenarios")
    return line + (f"; {effect:g} needs x{k} scenarios" if k else f"; {effect:g} out of reach")


def _sizes(variances: list[Variance], effect: float, level: float, power: float) -> dict[str, int | None]:
    """The multiple of the scenarios and of the samples every statistic needs (None: out of reach)."""
    out: dict[str, int | None] = {}
    for by in ("scenarios", "samples"):
        each = [needed(v, effect, level, power, by) for v in variances]
        out[by] = None if None in each else max(k or 1 for k in each)
    return out


def _options(variances: list[Variance], effect: float, level: float, power: float, price: Price,
             mode: str) -> list[str]:
    sizes = _sizes(variances, effect, level, power)
    clusters = max(v.clusters for v in variances)
    lines = [f"To find a shift of {effect:g} in every statistic with power {power:g}:"]
    if sizes["scenarios"] == 1:
        return [*lines, f"  the suite as it stands: {price.of(price.calls)}"]
    k = sizes["scenarios"]
    lines.append(f"  more scenarios: x{k} ({clusters * k:,} clusters): {price.of(price.calls * k)}" if k else
                 "  more scenarios: out of reach")
    k = sizes["samples"]
    if mode == "logprob":
        lines.append("  more samples per cell: none to add (logprob mode reads exact probabilities)")
    else:
        lines.append(f"  more samples per cell: x{k}: {price.of(price.calls * k)}" if k else
                     "  more samples per cell: out of reach (the clustering sets a floor): add scenarios")
        lines += _logprob(variances, effect, level, power, price)
    return lines


def _logprob(variances: list[Variance], effect: float, level: float, power: float, price: Price) -> list[str]:
    """A sampled design read in logprob mode: one call per row, each answer's variance at most the sampled one."""
    samples = price.calls / max(price.rows, 1)
    exact = [replace(v, n1=max(round(v.n1 / samples), 1), n0=max(round(v.n0 / samples), 1)) for v in variances]
    k = _sizes(exact, effect, level, power)["scenarios"]
    worst = max(mde(v, level, power) for v in exact)
    head = (f"  logprob mode (answer variance bounded by the sampled one): MDE <= {worst:.4f} now, "
            f"{price.of(price.rows)}")
    return [head, f"    with x{k} scenarios: {price.of(price.rows * k)}" if k else "    out of reach"]


@click.command("plan")
@click.argument("target", metavar="SPEC_OR_SUITE", type=click.Path(exists=True, path_type=Path))
@click.option("--pilot", type=click.Path(exists=True, file_okay=False, path_type=Path),
              help="A run of the suite (e.g. spec run SUITE --limit 300) whose answers give each statistic's "
              "variance and intra-cluster correlation.")
@click.option("--effect", type=click.FloatRange(0, min_open=True),
              help="The shift to detect, in the statistic's units (0.05: 5 points of a probability).")
@click.option("--power", type=UNIT, default=0.8, show_default=True, help="The chance of finding --effect.")
@click.option("--alpha", type=UNIT, default=0.05, show_default=True, help="The false discovery rate (BH).")
@click.option("--icc", type=click.FloatRange(0, 1), default=0.1, show_default=True,
              help="The intra-cluster correlation assumed where no pilot gives one.")
@click.option("--model", default=DEFAULT_MODEL, show_default=True,
              help="The model whose price the options are given at (litellm's cost map, as spec run --dry-run).")
def plan_cmd(target: Path, pilot: Path | None, effect: float | None, power: float, alpha: float, icc: float,
             model: str) -> None:
    """Plan an audit before paying for it: what it can detect, and what a target effect costs.

    \b
    Examples:
      spec plan specs/demographic_decisions.spec --model openai/gpt-4o-mini
      spec run generated/demographic_decisions --limit 300 --out runs/pilot
      spec plan generated/demographic_decisions --pilot runs/pilot --effect 0.05 --model openai/gpt-4o-mini

    The minimum detectable effect (MDE) is found with probability --power at the level BH holds one
    statistic to among all of them (alpha / statistics); docs/scoring.md, "Planning a study".
    """
    with _suite(target) as suite:
        variances = _variances(suite, target, pilot, icc)
        price = _price(suite, model)
        level = bh_level(alpha, len(variances))
        echo(f"{suite.manifest.suite} ({suite.manifest.mode} mode, {model}): {price.of(price.calls)} now; "
             f"{len(variances)} statistics, each tested at {level:.4g} (BH at {alpha:g}), power {power:g}")
        for source in dict.fromkeys(v.source for v in variances):
            echo(f"  variances: {source}")
        for v in variances:
            echo(_row(v, level, power, effect))
        for line in _options(variances, effect, level, power, price, suite.manifest.mode) if effect else []:
            echo(line)
