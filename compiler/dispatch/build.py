"""The compiler's front door: spec file -> checked designs -> compiled suite folder."""

from __future__ import annotations

import hashlib
import shutil
import sys
import tempfile
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from spec_audits.base.records import Record
from spec_audits.compiler import nodes as n
from spec_audits.compiler.budget import DEFAULT_BUDGET, Budget, Size, check_budget, counted, planned_size
from spec_audits.compiler.check import check_spec
from spec_audits.compiler.dispatch.designs import prepare_designs, prepare_generators
from spec_audits.compiler.errors import ErrorCollector, SpecError
from spec_audits.compiler.family import CompiledDesign
from spec_audits.compiler.files import spec_roots
from spec_audits.compiler.load import collect_spec, display_path, load_spec
from spec_audits.compiler.suite_checks import check_suite, shared_and_served, suite_analysis
from spec_audits.dispatch import registry
from spec_audits.sdk.interface import DesignContext, Family

if TYPE_CHECKING:  # only a compile builds the manifest model (spec_audits.contract.writer)
    from spec_audits.compiler.emit import Tally
    from spec_audits.contract.suite_model import Manifest


class Checked(Record, frozen=False):
    """A spec that passed every check, ready to expand."""

    path: Path
    spec: n.Spec
    sources: dict[str, str]
    seed: int
    designs: list[CompiledDesign]
    size: Size | None  # None when a design cannot plan its size: it is counted as it expands
    budget: Budget
    generators: dict[str, tuple[Family, Any]]


def read_spec_file(path: Path) -> tuple[n.Spec, dict[str, str]]:
    """The spec with its imports, parsed with the clauses of the families it names (of every family when
    that fails: compiler/parse.py `LazySyntax`), and the texts read."""
    return load_spec(path, registry.SPEC_SYNTAX)


def check_file(path: Path, seed: int | None = None, allowed: Sequence[Path] = (),
               budget: Budget = DEFAULT_BUDGET) -> Checked:
    """Parse, run the shared checks, every design's and generator's family checks and the compile budget in
    one pass, on what parsed when some of it did not (compiler/recover.py); raise SpecError listing every
    mistake found. The spec reads files only under its own folder
    and the `allowed` ones."""
    with spec_roots(path, allowed):
        errors = ErrorCollector()
        spec, sources = collect_spec(path, registry.SPEC_SYNTAX, errors)
        tables = check_spec(spec, errors, seed)
        final_seed = seed if seed is not None else int(spec.seed or 0)
        context = DesignContext(spec, tables, final_seed)
        designs = prepare_designs(spec, context, errors)
        generators = prepare_generators(spec, context, errors)
    size = planned_size(designs) if not errors.diagnostics else None
    if size is not None:
        check_budget(size, budget, designs[0].span, errors)
    if designs and not errors.diagnostics:
        check_suite(designs, errors)
    errors.raise_if_any(sources)
    return Checked(path, spec, sources, final_seed, designs, size, budget, generators)


def default_out_dir(checked: Checked) -> Path:
    return Path("generated") / (checked.spec.header.name if checked.spec.header else checked.path.stem)


def compile_file(
    path: Path, out_dir: Path | None = None, seed: int | None = None, progress: bool = False,
    allowed: Sequence[Path] = (), budget: Budget = DEFAULT_BUDGET,
) -> tuple[Manifest, Path]:
    """Compile a spec into out_dir (suite.jsonl, schema.json, manifest.json), atomically.

    Returns the manifest and the folder written (generated/<suite name> when out_dir is None).
    `progress` shows a row counter on stderr when it is a terminal.
    """
    from spec_audits.compiler.emit import publish  # the writing stages: `spec check` never loads them

    checked = check_file(path, seed, allowed, budget)
    out_dir = out_dir or default_out_dir(checked)
    out_dir.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{out_dir.name}.tmp-", dir=out_dir.parent))
    try:
        manifest = _write(checked, staging, progress)
        publish(staging, out_dir)
    except SpecError as err:  # a template over its limits in a row the checks did not render
        shutil.rmtree(staging, ignore_errors=True)
        raise SpecError(err.diagnostics, {**checked.sources, **err.sources}) from None
    except OSError as err:  # a full disk or a size limit: nothing was published; say where it was going
        shutil.rmtree(staging, ignore_errors=True)
        if err.errno is None or err.filename is not None:
            raise
        raise OSError(err.errno, err.strerror, str(out_dir)) from None
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return manifest, out_dir


def _write(checked: Checked, folder: Path, progress: bool) -> Manifest:
    from spec_audits.compiler.emit import DuplicateRowError, Tally, UnbalancedError, write_rows
    from spec_audits.contract.writer import write_manifest, write_schema

    tally = Tally()
    keys = checked.designs[0].balance_keys
    rows: Iterable[dict[str, Any]] = (row for design in checked.designs for row in design.rows())
    if checked.size is None:
        rows = counted(rows, checked.budget, checked.designs[0].span)
    if progress and sys.stderr.isatty():
        from tqdm import tqdm  # a tenth of `spec check`'s own start-up: only a compile on a terminal needs it

        rows = tqdm(rows, unit=" rows", desc="compiling", leave=False, mininterval=0.5)
    try:
        suite_sha256 = write_rows(rows, folder, tally, keys)
    except DuplicateRowError as err:
        errors = ErrorCollector()
        errors.add(checked.designs[0].span, f"the design produces the same row twice (id {err})",
                   "two conditions or influences render identical prompts with identical cells")
        errors.raise_if_any(checked.sources)
    write_schema(folder)
    try:
        fields = _manifest_fields(checked, tally, keys)
    except UnbalancedError as err:
        errors = ErrorCollector()
        errors.add(checked.designs[0].span, f"the design cannot be balanced as declared: {err}",
                   "every cell must get the same number of trials; check filters and sampling")
        errors.raise_if_any(checked.sources)
    return write_manifest(folder, fields, {"suite.jsonl": suite_sha256})


def _manifest_fields(checked: Checked, tally: Tally, keys: tuple[str, ...]) -> dict[str, object]:
    from spec_audits.compiler.emit import balance_report
    from spec_audits.compiler.version import COMPILER_VERSION, SCHEMA_VERSION

    spec = checked.spec
    shared, served = shared_and_served(checked.designs)
    return {
        "suite": spec.header.name if spec.header else checked.path.stem,
        "title": spec.header.title if spec.header else None,
        "description": spec.description,
        "citation": spec.citation,
        "spec_file": display_path(checked.path),
        "spec_sha256": hashlib.sha256(checked.path.read_bytes()).hexdigest(),
        "compiler_version": COMPILER_VERSION,
        "schema_version": SCHEMA_VERSION,
        "seed": checked.seed,
        "mode": checked.designs[0].mode,
        "analysis": suite_analysis(checked.designs),
        "rows": tally.rows,
        "trials": tally.trials,
        "cells": {key: len(values) for key, values in sorted(tally.axes.items())},
        "balance": balance_report(tally, keys, shared, served),
    }
