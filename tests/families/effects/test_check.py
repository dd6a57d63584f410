"""An effects design compiles to balanced rows, and every mistake is a located error with the exact message."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from spec_audits.compiler.dispatch.build import check_file, compile_file
from spec_audits.compiler.errors import SpecError
from spec_audits.contract.reader import read_suite
from tests.families.effects import SPEC, write_tiny


def _errors(tmp_path: Path, old: str, new: str) -> list[str]:
    assert old in SPEC
    path = write_tiny(tmp_path, SPEC.replace(old, new))
    with pytest.raises(SpecError) as err:
        check_file(path)
    return [f"{d.span.line}:{d.span.column}: {d.message}" + (f" | {d.hint}" if d.hint else "")
            for d in err.value.diagnostics]


def test_the_tiny_design_compiles_with_its_balance_recorded(tmp_path: Path) -> None:
    suite = tmp_path / "suite"
    compile_file(write_tiny(tmp_path), suite)
    loaded = read_suite(suite)
    assert len(loaded.rows) == 3 * 6 * 2
    manifest = json.loads((suite / "manifest.json").read_text())
    assert manifest["balance"] == [{"cells": 12, "keys": ["age", "gender", "condition"], "shared": {},
                                    "trials_per_cell": 3}]
    analysis = manifest["analysis"]
    assert analysis["crossing"] == {"kind": "full", "factors": ["age", "gender"], "levels": [3, 2], "runs": 6,
                                    "per_level": {"age": 2, "gender": 3}, "per_pair": {"age x gender": 1}}
    assert [f["reference"] for f in analysis["factors"]] == ["middle", "man"]
    assert loaded.strata == ["age", "gender", "condition"]
    fair = next(r for r in loaded.rows if r.cell == {"scenario": "loan", "age": "old", "gender": "woman",
                                                      "condition": "fair"})
    assert fair.messages[-1].content == ("Approve the loan? The person is a old woman. Yes or no?\n\n"
                                         "Do not let age or gender matter.")
    assert fair.answers == {"yes": "yes", "no": "no"}


def test_a_reference_level_that_does_not_exist(tmp_path: Path) -> None:
    assert _errors(tmp_path, "age = middle", "age = midle") == [
        "12:19: reference level 'midle' is no level of factor 'age' | did you mean 'middle'?"]


def test_a_reference_for_a_factor_the_design_does_not_cross(tmp_path: Path) -> None:
    assert _errors(tmp_path, "gender = man", "race = man") == [
        "12:27: reference for 'race', which this design does not cross | valid names: 'age', 'gender'"]


def test_two_references_for_one_factor(tmp_path: Path) -> None:
    assert _errors(tmp_path, "gender = man", "age = old") == [
        "12:27: a second reference for factor 'age' | name one level per factor"]


def test_a_cross_over_an_undeclared_factor(tmp_path: Path) -> None:
    assert _errors(tmp_path, "cross age x gender", "cross age x gendr") == [
        "11:15: unknown factor 'gendr' | did you mean 'gender'?"]


def test_a_factor_crossed_twice(tmp_path: Path) -> None:
    assert _errors(tmp_path, "cross age x gender", "cross age x gender x age") == [
        "11:24: factor 'age' is crossed twice | name each factor once"]


def test_an_interaction_over_one_factor(tmp_path: Path) -> None:
    assert _errors(tmp_path, "  items scenarios\n", "  items scenarios\n  interactions age x age\n") == [
        "14:22: an interaction is between two different factors, got 'age x age' | write: interactions age x gender"]


def test_an_interaction_over_a_factor_the_design_does_not_cross(tmp_path: Path) -> None:
    assert _errors(tmp_path, "  items scenarios\n", "  items scenarios\n  interactions age x race\n") == [
        "14:22: interaction over 'race', which this design does not cross | valid names: 'age', 'gender'"]


def test_a_fraction_the_factors_do_not_allow(tmp_path: Path) -> None:
    assert _errors(tmp_path, "  items scenarios\n", "  items scenarios\n  fraction 4\n") == [
        "14:3: no balanced fraction of 4 runs for factors of 3 x 2 levels: a fraction is built when three or more "
        "factors all have the same prime number of levels | remove the fraction clause to ask every combination"]


def test_a_directional_condition_is_refused(tmp_path: Path) -> None:
    assert _errors(tmp_path, "conditions baseline, fair", "conditions baseline, toward A") == [
        "14:24: an effects condition is baseline or an intervention's name, got 'toward_A' | declare the "
        "intervention as `influence NAME append \"...\"` and list its name"]


def test_a_balanced_fraction_compiles_with_its_proof(tmp_path: Path) -> None:
    spec = (SPEC.replace('factor gender:\n  man "man"   woman "woman"',
                         'factor gender:\n  man "man"   woman "woman"   other "person"\n'
                         'factor tone:\n  calm "calm"   curt "curt"   warm "warm"\n'
                         'factor place:\n  city "city"   town "town"   farm "farm"')
            .replace("cross age x gender", "cross age x gender x tone x place")
            .replace("{{ gender.plural }}.", "{{ gender.plural }} from a {{ place }}, {{ tone }}.")
            .replace("  items scenarios\n", "  items scenarios\n  fraction 9 seed 4\n"))
    suite = tmp_path / "suite"
    compile_file(write_tiny(tmp_path, spec), suite)
    crossing = json.loads((suite / "manifest.json").read_text())["analysis"]["crossing"]
    assert crossing == {"kind": "fraction", "seed": 4, "factors": ["age", "gender", "tone", "place"],
                        "levels": [3, 3, 3, 3], "runs": 9, "per_level": dict.fromkeys(crossing["factors"], 3),
                        "per_pair": {f"{a} x {b}": 1 for i, a in enumerate(crossing["factors"])
                                     for b in crossing["factors"][i + 1:]}}
    assert len(read_suite(suite).rows) == 3 * 9 * 2


def test_trials_per_cell_keeps_n_of_every_cell(tmp_path: Path) -> None:
    suite = tmp_path / "suite"
    spec = SPEC.replace("  answer yesno\n", "  answer yesno\n  samples 4\n  trials 5 per cell seed 3\n")
    compile_file(write_tiny(tmp_path, spec), suite)
    manifest = json.loads((suite / "manifest.json").read_text())
    assert manifest["balance"][0]["trials_per_cell"] == 5 and manifest["trials"] == 5 * 12
    assert _errors(tmp_path / "x", "  answer yesno\n", "  answer yesno\n  trials 4 per cell\n") == [
        "17:3: trials 4 per cell, but a cell has 3 (scenarios x samples) | ask for 1 to 3"]


@pytest.mark.parametrize("form", ["scale 1..5", "number 0..20"])
def test_a_scale_or_a_number_takes_the_whole_numbers_of_its_range(form: str, tmp_path: Path) -> None:
    suite = tmp_path / "suite"
    compile_file(write_tiny(tmp_path, SPEC.replace("answer yesno", f"answer {form}")), suite)
    low, high = (int(v) for v in form.split()[1].split(".."))
    row = read_suite(suite).rows[0]
    assert row.answers == {str(v): str(v) for v in range(low, high + 1)}
    assert json.loads((suite / "manifest.json").read_text())["analysis"]["answer"]["kind"] == form.split()[0]


def test_an_empty_range_is_an_error_at_the_answer(tmp_path: Path) -> None:
    assert _errors(tmp_path, "answer yesno", "answer number 5..5") == [
        "16:10: a number runs from a lower to a higher whole number, got 5..5"]


def test_a_crossed_factor_that_no_template_reads_is_an_error_at_its_name(tmp_path: Path) -> None:
    """Its levels would all get the same prompt, so every contrast of it would measure noise."""
    assert _errors(tmp_path, "a {{ age.plural }} {{ gender.plural }}.", "a {{ gender.plural }}.") == [
        "11:9: factor 'age' is crossed but no template of effects design 'tiny' reads it, so its levels would all "
        "get the same prompt | write {{ age }} (or a form, {{ age.plural }}) in the prompt or system template, "
        "or leave it out of cross"]
