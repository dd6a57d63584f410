"""No clock decides what a compile writes: puzzle generation counts attempts and Z3 counts solver steps
(rlimit), so a puzzle spec compiled while every clock jumps an hour at each read gives the same bytes."""

from __future__ import annotations

import ast
import itertools
import time
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

import spec_audits.compiler as compiler
import spec_audits.families as families
from spec_audits.compiler.dispatch.build import compile_file
from spec_audits.puzzles import AttributeConfig, PuzzleError, ZebraConfig, generate_zebra, solve
from tests.families.cue.test_cue_score_run import SPEC, write_dilemmas

CLOCK_MODULES = ("time", "datetime")
CLOCKS = ("monotonic", "perf_counter", "time", "process_time", "thread_time")
HOUR_S = 3600
ZEBRA = ZebraConfig(name="z", positions=4, attributes=[
    AttributeConfig(name=name, values=list(pool)) for name, pool in (("race", "abcd"), ("job", "wxyz"))])


def _jump_clocks(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every clock of the time module reads an hour later than at its previous read."""
    reads = itertools.count(1)
    for name in CLOCKS:
        seconds, nanoseconds = getattr(time, name), getattr(time, f"{name}_ns")
        monkeypatch.setattr(time, name, lambda real=seconds: real() + HOUR_S * next(reads))
        monkeypatch.setattr(time, f"{name}_ns", lambda real=nanoseconds: real() + HOUR_S * 10**9 * next(reads))


def _cue_spec(folder: Path, preset: str) -> Path:
    """The shipped cue-visibility spec over its first 10 dilemmas (two reuse groups), in a style preset."""
    spec = SPEC.read_text(encoding="utf-8").replace("style preset released", f"style preset {preset}")
    (folder / "cue.spec").write_text(spec, encoding="utf-8")
    write_dilemmas(folder, 10)
    return folder / "cue.spec"


def _compiled(spec: Path, out: Path) -> dict[str, bytes]:
    compile_file(spec, out)
    return {path.name: path.read_bytes() for path in sorted(out.iterdir())}


@pytest.mark.parametrize("preset", ["released", "minimal"])
def test_a_puzzle_spec_compiles_to_the_same_bytes_while_the_clocks_jump(
    preset: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    spec = _cue_spec(tmp_path, preset)
    still = _compiled(spec, tmp_path / "still")
    _jump_clocks(monkeypatch)
    assert time.monotonic() + HOUR_S < time.monotonic()
    assert _compiled(spec, tmp_path / "jumping") == still


def test_a_zebra_grid_that_takes_several_attempts_is_the_same_while_the_clocks_jump(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    still = generate_zebra(ZEBRA, "hard", 1, ("x",))  # found at the third attempt
    _jump_clocks(monkeypatch)
    assert generate_zebra(ZEBRA, "hard", 1, ("x",)) == still


def test_a_generated_puzzle_z3_cannot_certify_within_its_steps_names_the_puzzle(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(solve, "RLIMIT", 1)
    with pytest.raises(PuzzleError) as raised:
        generate_zebra(ZEBRA, "easy", 1, ("x",))
    assert str(raised.value) == (
        "puzzle 'z': Z3 could not find a model within its step limit (rlimit 1: a count of solver work, not of time)")


def _clock_reads(path: Path) -> Iterator[str]:
    """Imports of a clock module, and Z3 timeouts set (`.set("timeout", ...)`, `set_param("timeout", ...)`)."""
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import | ast.ImportFrom):
            names = [node.module or ""] if isinstance(node, ast.ImportFrom) else [a.name for a in node.names]
            yield from (f"{path.name}:{node.lineno}: import {n}" for n in names if n.split(".")[0] in CLOCK_MODULES)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute | ast.Name) and node.args:
            called = node.func.attr if isinstance(node.func, ast.Attribute) else node.func.id
            first = node.args[0]
            if called in ("set", "set_param") and isinstance(first, ast.Constant) and first.value == "timeout":
                yield f"{path.name}:{node.lineno}: {called}('timeout', ...)"


@pytest.mark.parametrize("package", [compiler, families, solve], ids=["compiler", "families", "puzzles"])
def test_the_compiler_the_families_and_the_puzzles_read_no_clock_and_set_no_z3_timeout(package: ModuleType) -> None:
    """The compiles above cover the paths they take; this covers every module of the packages."""
    modules = sorted(Path(str(package.__file__)).parent.rglob("*.py"))
    assert len(modules) > 10 and [read for path in modules for read in _clock_reads(path)] == []
