"""Builders shared by the tests and the benchmarks: paths, and small compiled suites written with the suite models."""

from __future__ import annotations

import atexit
import contextlib
import json
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

from spec_audits.contract.suite_model import SuiteRow
from spec_audits.contract.writer import suite_row, write_suite_folder

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures"
SUITE_FILES = ("suite.jsonl", "manifest.json", "schema.json")


def shipped_spec(name: str) -> Callable[[Path], Path]:
    """A writer of specs/NAME into a folder, with specs/data linked beside it: for tests that edit a copy."""

    def copy(folder: Path) -> Path:
        (folder / "data").symlink_to(ROOT / "specs" / "data")
        path = folder / name
        path.write_text((ROOT / "specs" / name).read_text(encoding="utf-8"), encoding="utf-8")
        return path

    return copy


def shipped_suite(name: str) -> Path:
    """generated/<name> compiled afresh from the spec its manifest names, once per test session.

    generated/ commits only manifest.json and schema.json (a suite.jsonl is tens of MB and each recompile
    committed would count again against the submission limit); the manifest holds suite.jsonl's sha256, so
    a byte-identical manifest proves a byte-identical suite."""
    spec_file = json.loads((ROOT / "generated" / name / "manifest.json").read_text(encoding="utf-8"))["spec_file"]
    return compiled_spec(spec_file, name)


@cache
def compiled_spec(spec_file: str, name: str) -> Path:
    """The repository's `spec_file` (a path relative to its root) compiled into a scratch folder `name`, once
    per test process: shipped suites take seconds to minutes to compile, and the tests only read them."""
    from spec_audits.compiler.dispatch.build import compile_file

    scratch = Path(tempfile.mkdtemp(prefix=f"spec-shipped-{name}-"))
    atexit.register(shutil.rmtree, scratch, ignore_errors=True)
    with contextlib.chdir(ROOT):  # the manifest records spec_file relative to the working folder
        compile_file(Path(spec_file), scratch / name)
    return scratch / name


def forced_choice_rows(n: int, samples: int, **extra: Any) -> list[SuiteRow]:
    """`n` A/B rows over 4 cells (2 influences x 2 orders); `extra` fields are added to every row."""
    rows = []
    for i in range(n):
        order = "AB" if i % 2 == 0 else "BA"
        first, second = ("tea", "coffee") if order == "AB" else ("coffee", "tea")
        body: dict[str, Any] = {
            "messages": [
                {"role": "system", "content": "Answer with a single letter."},
                {
                    "role": "user",
                    "content": f"Prompt {i}. Which do you prefer? A: {first} B: {second}. "
                    "Respond with only 'A' or 'B'.",
                },
            ],
            "samples": samples,
            "cell": {"influence": ["none", "survey"][(i // 2) % 2], "order": order, "condition": "baseline"},
            "answers": {"A": first, "B": second},
            "decode": {"temperature": 1.0, "max_tokens": 2},
            **extra,
        }
        rows.append(suite_row(body))
    return sorted(rows, key=lambda r: r.id)


def write_suite(folder: Path, rows: list[SuiteRow], mode: str = "sample") -> Path:
    """Write suite.jsonl, schema.json and manifest.json for `rows` into `folder`."""
    write_suite_folder(
        folder, rows, suite=folder.name, spec_file="tests.spec", spec_sha256="0" * 64,
        compiler_version="test", schema_version="1", seed=0, mode=mode, cells={"influence": 2, "order": 2},
    )
    return folder


def rewrite_suite(folder: Path, edit: Callable[[int, dict[str, Any]], None]) -> list[SuiteRow]:
    """Rewrite the suite in `folder` as a compile would after `edit(index, row)` changed rows in place (a row
    without its id): ids, order and manifest recomputed. Returns the new rows in the old rows' order."""
    mode = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))["mode"]
    rows = []
    for index, row in enumerate(suite_rows(folder)):
        del row["id"]
        edit(index, row)
        rows.append(suite_row(row))
    write_suite(folder, rows, mode)
    return rows


def suite_rows(folder: Path) -> list[dict[str, Any]]:
    """The rows of a compiled suite folder, as plain dicts."""
    return [json.loads(line) for line in (folder / "suite.jsonl").read_text(encoding="utf-8").splitlines()]


def shipped_plan(spec: str, *args: str) -> str:
    """`spec plan specs/SPEC ARGS` run from the repository root; its output (the command must succeed)."""
    with contextlib.chdir(ROOT):
        return plan(f"specs/{spec}", *args)


def plan(*args: str) -> str:
    """`spec plan ARGS`'s output (the command must succeed)."""
    from click.testing import CliRunner

    from spec_audits.cli import main

    result = CliRunner().invoke(main, ["plan", *args])
    assert result.exit_code == 0 and result.exception is None, result.output
    return result.output


def hand_mde(unit_var: float, n: int, clusters: int, per_cluster: float, icc: float, tests: int) -> float:
    """The MDE by hand: (t_{1-a/2} + t_{0.8}) SE with G - 1 df, a = 0.05 / tests, equal arms of n answers,
    SE^2 = unit_var (1 + (m - 1) icc) 2 / n."""
    import math

    from scipy import stats

    level, df = 0.05 / tests, clusters - 1
    se = math.sqrt(unit_var * (1 + (per_cluster - 1) * icc) * 2 / n)
    return float((stats.t.ppf(1 - level / 2, df) + stats.t.ppf(0.8, df)) * se)


def write_run(folder: Path, suite: Path, results: list[dict[str, Any]], model: str = "synthetic/model") -> Path:
    """A run folder of `suite` holding `results` (results.jsonl lines; item_id, sample and the answer fields
    each), all answered by `model`: what `spec run` leaves, for scorers and `spec plan --pilot`."""
    import hashlib

    folder.mkdir(parents=True)
    lines = [json.dumps({"model": model, "params": {}, **result}) for result in results]
    (folder / "results.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    info = {"suite_dir": str(suite), "suite_manifest_sha256": hashlib.sha256((suite / "manifest.json").read_bytes())
            .hexdigest(), "model": model, "mode": "sample", "settings": {}, "started": "2026-01-01T00:00:00+00:00",
            "planned": len(results), "done": len(results), "failed": 0}
    (folder / "run.json").write_text(json.dumps(info), encoding="utf-8")
    return folder


def anova_icc(y: Any, clusters: Any) -> float:
    """The one-way ANOVA estimate of the intra-cluster correlation of answers `y` in equal `clusters`, the
    textbook estimator a pilot's design-effect icc is checked against: (MSB - MSW) / (MSB + (m - 1) MSW)."""
    import pandas as pd

    groups = pd.Series(y, dtype=float).groupby(list(clusters))
    m, count = float(groups.size().mean()), groups.ngroups
    between = m * float(groups.mean().var(ddof=1))
    within = float(groups.var(ddof=1).mean())
    assert groups.size().nunique() == 1 and count > 1, "equal clusters, at least two"
    return (between - within) / (between + (m - 1) * within)


def effects_pilot(folder: Path) -> Path:
    """A run (no answers yet) of a small effects suite compiled in `folder`: a pilot of another family."""
    from click.testing import CliRunner

    from spec_audits.cli import main
    from tests.families.effects import write_tiny

    compiled = CliRunner().invoke(main, ["compile", str(write_tiny(folder)), "-o", str(folder / "effects")])
    assert compiled.exit_code == 0 and compiled.exception is None, compiled.output
    return write_run(folder / "pilot", folder / "effects", [])


def repeat_message(path: Path, row: int, item: str, sample: int, earlier: int, kinds: str) -> str:
    """What `spec score` (or `spec view`) prints, exit 1, for row `row` of results.jsonl `path`, which repeats row
    `earlier`'s (item, sample) (`kinds`: 'failed then answered', ...): every family refuses a repeat alike."""
    return (f"Error: {path}, row {row}, column 'sample': item {item!r} sample {sample} again: row {earlier} holds it "
            f"already ({kinds}); a results file holds one row per (item, sample), and spec run never writes two; if "
            "the file joins a retry or shards by hand, `spec merge RUN --out NEW` keeps one row of each (the last "
            "answer; an answer beats a failure)\n")


def refused_repeats(run: Path, out: Path, at: int) -> Path:
    """Copies of run folder `run` under `out` whose results.jsonl repeat an (item, sample), each refused by `spec
    score` with `repeat_message`: `retried` puts a failed copy of row `at` (0-based, answered) before it, `twice`
    ends with the first row (answered) again. Returns `retried`, for `spec merge`."""
    from click.testing import CliRunner

    from spec_audits.cli import main

    lines = (run / "results.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
    failed = json.dumps({**json.loads(lines[at]), "response": None, "answer": None, "outcome": None,
                         "error": "timeout"}) + "\n"
    for name, kept, row, earlier, kind in (("retried", [*lines[:at], failed, *lines[at:]], at + 2, at + 1, "failed"),
                                           ("twice", [*lines, lines[0]], len(lines) + 1, 1, "answered")):
        folder = out / name
        folder.mkdir(parents=True)
        (folder / "run.json").write_bytes((run / "run.json").read_bytes())
        (folder / "results.jsonl").write_text("".join(kept), encoding="utf-8")
        result = CliRunner().invoke(main, ["score", str(folder)])
        assert result.exit_code == 1 and isinstance(result.exception, SystemExit), result.output
        repeated = json.loads(kept[row - 1])
        assert result.output == repeat_message(folder / "results.jsonl", row, repeated["item_id"], repeated["sample"],
                                               earlier, f"{kind} then answered")
    return out / "retried"


def imported_after(*argv: str) -> set[str]:
    """The top-level packages a fresh process has imported once `spec ARGV...` has run (exit status 0)."""
    probe = ("import sys\nfrom spec_audits.cli import main\ntry:\n    main(sys.argv[1:])\n"
             "except SystemExit as stop:\n    if stop.code:\n        raise\n"
             "print(' '.join(sorted({m.split('.')[0] for m in sys.modules})), file=sys.stderr)")
    done = subprocess.run([sys.executable, "-c", probe, *argv], cwd=ROOT, capture_output=True, text=True, check=True)
    return set(done.stderr.split())
