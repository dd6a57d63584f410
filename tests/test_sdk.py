"""Issue 33 item 1: one public module for families, spec_audits.sdk. Its names are one list (the imports
under TYPE_CHECKING, which mypy reads, and __all__ agree), each resolves to what it names, and importing it
loads no other module of spec: a family pays only for the names it uses."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

from spec_audits import sdk
from spec_audits.compiler import nodes
from spec_audits.puzzles.propositional import Selection
from spec_audits.sdk.interface import Family


def test_the_names_are_one_list_and_each_resolves() -> None:
    assert sorted(sdk.__all__) == sorted(sdk._home())
    assert (sdk.Family, sdk.nodes, sdk.PuzzleSelection) == (Family, nodes, Selection)
    assert all(getattr(sdk, name) is not None for name in sdk.__all__)


def test_the_names_homes_are_those_the_imports_declare() -> None:
    """_home scans the TYPE_CHECKING imports as text (a check pays for no parse of the module): it reads each name,
    alias and module as Python's parser does, a commented import list included."""
    tree = ast.parse(Path(sdk.__file__).read_text(encoding="utf-8"))
    block = next(node for node in tree.body if isinstance(node, ast.If))
    parsed = {alias.asname or alias.name: (str(node.module), alias.name)
              for node in block.body if isinstance(node, ast.ImportFrom) for alias in node.names}
    assert sdk._home() == parsed
    assert any(alias != name for alias, (_, name) in parsed.items())  # an `as` among them


def test_importing_the_sdk_loads_nothing_else_of_spec() -> None:
    code = "import sys, spec_audits.sdk; print(sorted(m for m in sys.modules if m.startswith('spec_audits')))"
    ran = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert ran.stdout.strip() == "['spec_audits', 'spec_audits.sdk']"


def test_a_familys_analysis_record_is_its_class_a_function_giving_it_or_the_base() -> None:
    """Family.analysis_record: a plug-in may give the class itself; the built-in families give `imported(...)`,
    so that checking a spec never imports the record (a pydantic model); none given is the base record."""
    from spec_audits.contract.analysis_record import AnalysisRecord
    from spec_audits.families.effects import FAMILY as EFFECTS
    from spec_audits.families.effects.record import EffectsRecord

    assert not isinstance(EFFECTS.analysis_record, type)
    assert EFFECTS.record_type() is EffectsRecord
    assert sdk.replaced(EFFECTS, analysis_record=EffectsRecord).record_type() is EffectsRecord
    assert sdk.replaced(EFFECTS, analysis_record=None).record_type() is AnalysisRecord
