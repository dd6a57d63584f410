"""`spec check`, `spec compile` and `spec show` through the command line (click's CliRunner)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import click
import pytest
from click.testing import CliRunner, Result

from spec_audits.cli import main
from tests.support import FIXTURES

POSITIONS = FIXTURES / "specs" / "golden_positions.spec"
GOLDEN = FIXTURES / "golden" / "golden_positions"
BROKEN = FIXTURES / "malformed" / "unknown_factor.spec"


def spec(*args: str | Path) -> Result:
    return CliRunner().invoke(main, [str(a) for a in args])


def ok(*args: str | Path) -> str:
    result = spec(*args)
    assert result.exit_code == 0, result.output
    return result.output


def failed(*args: str | Path) -> str:
    result = spec(*args)
    assert result.exit_code == 1, result.output
    assert isinstance(result.exception, SystemExit), result.exception
    return result.output


def rows(folder: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (folder / "suite.jsonl").read_text(encoding="utf-8").splitlines()]


@pytest.fixture
def suite(tmp_path: Path) -> Path:
    folder = tmp_path / "suite"
    shutil.copytree(GOLDEN, folder)
    return folder


# ---- check ---------------------------------------------------------------------------------
def test_check_valid_spec_summarises_the_design() -> None:
    out = ok("check", POSITIONS)
    assert "design 'main' is valid: 2 factors, 6 influences, 3 conditions, 16 comparisons, 2 display orders" in out


def test_check_invalid_spec_exits_1_with_located_error() -> None:
    out = failed("check", BROKEN)
    assert "unknown_factor.spec:15:11: error: unknown factor 'colour'" in out
    assert "hint: did you mean 'color'?" in out


# ---- compile -------------------------------------------------------------------------------
def test_compile_to_folder_reports_balance(tmp_path: Path) -> None:
    out = ok("compile", POSITIONS, "-o", tmp_path / "out")
    assert "compiled golden_positions: 416 prompts, 832 trials" in out
    assert "balanced: 36 cells (factor x influence x condition), 32 trials each" in out
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["manifest.json", "schema.json", "suite.jsonl"]


def test_compile_defaults_to_generated_suite_name(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    shutil.copy(POSITIONS, tmp_path / "p.spec")
    monkeypatch.chdir(tmp_path)
    ok("compile", "p.spec")
    assert (tmp_path / "generated" / "golden_positions" / "suite.jsonl").is_file()


def by_cell(folder: Path) -> dict[str, dict[str, str]]:
    """influence -> {cell key: id}, to compare two compiles cell by cell."""
    out: dict[str, dict[str, str]] = {}
    for row in rows(folder):
        cell = row["cell"]
        key = json.dumps(cell, sort_keys=True)
        out.setdefault(str(cell["influence"]), {})[key] = row["id"]
    return out


def test_seed_override_changes_only_the_few_shot_rows(tmp_path: Path) -> None:
    ok("compile", POSITIONS, "-o", tmp_path / "a")
    ok("compile", POSITIONS, "-o", tmp_path / "b", "--seed", "99")
    first, second = by_cell(tmp_path / "a"), by_cell(tmp_path / "b")
    assert first.keys() == second.keys()
    for influence in first:
        assert first[influence].keys() == second[influence].keys()
        same = first[influence] == second[influence]
        assert same == (influence != "shots"), influence
    assert json.loads((tmp_path / "b" / "manifest.json").read_text())["seed"] == 99


def test_failed_compile_writes_nothing(tmp_path: Path) -> None:
    failed("compile", BROKEN, "-o", tmp_path / "out")
    assert list(tmp_path.iterdir()) == []


def test_failed_compile_keeps_the_existing_suite(tmp_path: Path, suite: Path) -> None:
    before = {p.name: p.read_bytes() for p in suite.iterdir()}
    failed("compile", BROKEN, "-o", suite)
    assert {p.name: p.read_bytes() for p in suite.iterdir()} == before
    assert [p.name for p in suite.parent.iterdir()] == ["suite"]


def test_crash_mid_write_leaves_no_temp_folder_and_keeps_the_suite(tmp_path: Path, suite: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    def explode(folder: Path) -> None:
        assert (folder / "suite.jsonl").is_file()  # rows are already written to the staging folder
        raise OSError("disk full")

    monkeypatch.setattr("spec_audits.contract.writer.write_schema", explode)  # build imports it when a compile writes
    before = {p.name: p.read_bytes() for p in suite.iterdir()}
    result = spec("compile", POSITIONS, "-o", suite)
    assert result.exit_code == 1 and result.output == "Error: disk full\n"  # a message, not a traceback
    assert {p.name: p.read_bytes() for p in suite.iterdir()} == before
    assert [p.name for p in suite.parent.iterdir()] == ["suite"]


# ---- show ----------------------------------------------------------------------------------
def test_show_prints_trials_per_cell_and_items(suite: Path) -> None:
    out = ok("show", suite, "-n", "2")
    assert out.startswith("suite golden_positions: 416 prompts, 832 trials, seed 424242")
    table = [line.split() for line in out.splitlines() if line.startswith(("color ", "size "))]
    assert len(table) == 2 * (1 + 6 * 2)
    shared = [line for line in table if line[1] == "(shared)"]
    assert [line[-1] for line in shared] == ["32", "32"]
    assert {line[-1] for line in table if line[1] != "(shared)"} == {"32"}
    assert out.count("=== item ") == 2


def test_show_filters_by_cell(suite: Path) -> None:
    out = ok("show", suite, "-n", "3", "--cell", "influence=aside", "--cell", "condition=toward_B")
    items = [line for line in out.splitlines() if line.startswith("=== item ")]
    assert len(items) == 3
    assert all("influence=aside" in line and "condition=toward_B" in line for line in items)
    assert out.count("<<I like") == 3


def test_show_filter_matching_nothing_fails(suite: Path) -> None:
    assert "no item matches influence=nothing" in failed("show", suite, "--cell", "influence=nothing")


@pytest.mark.parametrize("name", ["", "nowhere"])
def test_show_of_a_folder_that_is_not_a_suite_names_the_missing_manifest(tmp_path: Path, name: str) -> None:
    folder = tmp_path / name
    expected = f"Error: {folder / 'manifest.json'}: missing; is {folder} a compiled suite? (spec compile writes one)\n"
    assert failed("show", folder) == expected


@pytest.mark.parametrize("command", main.list_commands(click.Context(main)))
def test_every_help_has_an_example(command: str) -> None:
    out = ok(command, "--help")
    assert ("Example:" in out or "Examples:" in out) and f"spec {command} " in out
