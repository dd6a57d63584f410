"""The compiler's front door: spec file -> checked designs -> compiled suite folder."""

from __future__ import annotations

import hashlib
import shutil
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tqdm import tqdm

from compiler import nodes as n
from compiler.check import check_spec
from compiler.designs import prepare_designs, prepare_generators
from compiler.emit import (
    DuplicateRowError,
    Tally,
    UnbalancedError,
    balance_report,
    publish,
    write_manifest,
    write_rows,
    write_schema,
)
from compiler.errors import ErrorCollector
from compiler.family import CompiledDesign
from compiler.load import display_path, load_spec
from compiler.suite_model import Manifest
from compiler.version import COMPILER_VERSION, SCHEMA_VERSION
from families.interface import DesignContext, Family


@dataclass
class Checked:
    """A spec that passed every check, ready to expand."""

    path: Path
    spec: n.Spec
    sources: dict[str, str]
    seed: int
    designs: list[CompiledDesign]
    generators: dict[str, tuple[Family, Any]]


def check_file(path: Path, seed: int | None = None) -> Checked:
    """Parse, run the shared checks and every design's family checks in one pass; raise SpecError listing
    every mistake found."""
    spec, sources = load_spec(path)
    errors = ErrorCollector()
    tables = check_spec(spec, errors, seed)
    final_seed = seed if seed is not None else int(spec.seed or 0)
    context = DesignContext(spec, tables, final_seed)
    designs = prepare_designs(spec, context, errors)
    generators = prepare_generators(spec, context, errors)
    errors.raise_if_any(sources)
    return Checked(path, spec, sources, final_seed, designs, generators)


def default_out_dir(checked: Checked) -> Path:
    return Path("generated") / (checked.spec.header.name if checked.spec.header else checked.path.stem)


def compile_file(
    path: Path, out_dir: Path | None = None, seed: int | None = None, progress: bool = False
) -> tuple[Manifest, Path]:
    """Compile a spec into out_dir (suite.jsonl, schema.json, manifest.json), atomically.

    Returns the manifest and the folder written (generated/<suite name> when out_dir is None).
    `progress` shows a row counter on stderr when it is a terminal.
    """
    checked = check_file(path, seed)
    out_dir = out_dir or default_out_dir(checked)
    out_dir.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{out_dir.name}.tmp-", dir=out_dir.parent))
    try:
        manifest = _write(checked, staging, progress)
        publish(staging, out_dir)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return manifest, out_dir


def _write(checked: Checked, folder: Path, progress: bool) -> Manifest:
    tally = Tally()
    keys = _one(checked, "balance_keys", lambda d: d.balance_keys)
    rows = (row for design in checked.designs for row in design.rows())
    if progress and sys.stderr.isatty():
        rows = tqdm(rows, unit=" rows", desc="compiling", leave=False, mininterval=0.5)
    try:
        write_rows(rows, folder, tally, keys)
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
    return write_manifest(folder, fields)


def _one(checked: Checked, what: str, get: Callable[[CompiledDesign], Any]) -> Any:
    """A setting all designs of one suite must agree on (the suite has one mode, analysis, balance)."""
    values = [get(d) for d in checked.designs]
    if any(v != values[0] for v in values[1:]):
        errors = ErrorCollector()
        errors.add(checked.designs[1].span, f"designs of one suite must share their {what}",
                   "put designs with different settings in separate spec files")
        errors.raise_if_any(checked.sources)
    return values[0]


def _manifest_fields(checked: Checked, tally: Tally, keys: tuple[str, ...]) -> dict[str, object]:
    spec = checked.spec
    served: dict[str, list[Any]] = {}
    shared: dict[str, str] = {}
    for design in checked.designs:
        shared.update(design.shared)
        for key, values in design.served.items():
            served[key] = sorted(set(served.get(key, [])) | set(values))
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
        "mode": _one(checked, "mode", lambda d: d.mode),
        "analysis": _one(checked, "analysis", lambda d: d.analysis),
        "rows": tally.rows,
        "trials": tally.trials,
        "cells": {key: len(values) for key, values in sorted(tally.axes.items())},
        "balance": balance_report(tally, keys, shared, served),
    }
