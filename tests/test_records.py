"""Issue 33: records (spec_audits/base/records.py) behave as the dataclasses they replace, and `spec check` of
every shipped spec builds no dataclass but the one plug-ins extend (compiler.family.Compiled): Python 3.11
compiles about six methods per dataclass, which `spec check` paid for some seventy classes."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
from typing import ClassVar

import pytest

from spec_audits.base.records import Record, field, replaced
from spec_audits.compiler.errors import Diagnostic, Span, SpecError
from tests.support import ROOT


class Point(Record):
    x: int
    y: int = 0
    tags: list[str] = field(default_factory=list)
    ORIGIN: ClassVar[str] = "0,0"  # not a field


class Labelled(Point, kw_only=True):
    label: str
    note: str = ""


class Counter(Record, frozen=False):
    name: str
    seen: dict[str, int] = dataclasses.field(default_factory=dict)

    def __post_init__(self) -> None:
        self.doubled = self.name * 2


def test_a_record_is_built_positionally_or_by_keyword_with_defaults_and_factories_per_instance() -> None:
    assert (Point(1).x, Point(1).y, Point(1).tags) == (1, 0, [])
    assert Point(1, 2, ["a"]) == Point(tags=["a"], y=2, x=1) == Point(1, tags=["a"], y=2)
    first, second = Point(1), Point(1)
    first.tags.append("mine")
    assert second.tags == [] and Counter("a").seen is not Counter("a").seen
    assert "ORIGIN" not in Point._record_fields and Point.ORIGIN == "0,0"
    assert "tags" not in Point.__dict__ and Point.y == 0  # a factory leaves no class attribute, a default stays


def test_keyword_only_fields_follow_the_positional_ones() -> None:
    made = Labelled(3, 4, label="here")
    assert (made.x, made.y, made.tags, made.label, made.note) == (3, 4, [], "here", "")
    assert Labelled.__match_args__ == ("x", "y", "tags")
    with pytest.raises(TypeError) as err:
        Labelled(3, 4, [], "here")
    assert str(err.value) == "Labelled takes 3 positional values (4 given)"


def test_a_wrong_argument_is_a_clear_type_error() -> None:
    cases = {lambda: Point(): "Point needs a value for x",
             lambda: Labelled(1): "Labelled needs a value for label",
             lambda: Point(1, z=2): "Point has no field z (its fields: x, y, tags)",
             lambda: Point(1, x=2): "Point got two values for x"}
    for build, message in cases.items():
        with pytest.raises(TypeError) as err:
            build()
        assert str(err.value) == message


def test_a_frozen_record_refuses_assignment_and_deletion_as_a_frozen_dataclass_does() -> None:
    point = Point(1)
    with pytest.raises(dataclasses.FrozenInstanceError) as err:
        point.x = 2
    assert str(err.value) == "cannot assign to field 'x': Point is frozen (build a new one: replaced)"
    with pytest.raises(dataclasses.FrozenInstanceError) as err:
        del point.y
    assert str(err.value) == "cannot delete field 'y': Point is frozen (build a new one: replaced)"
    assert point == Point(1)


def test_equality_hash_and_repr_are_a_dataclass_s() -> None:
    assert Point(1, 2) == Point(1, 2) and Point(1, 2) != Point(2, 1)
    assert Point(1) != Labelled(1, label="a") and Point(1) != (1, 0, [])
    assert hash(Point(1, 2, ())) == hash(Point(1, 2, ())) == hash((1, 2, ()))
    assert repr(Labelled(1, label="a")) == "Labelled(x=1, y=0, tags=[], label='a', note='')"
    assert repr(Point(1)) == repr(_DataclassPoint(1)).replace("_DataclassPoint", "Point")  # a dataclass's text
    counter = Counter("a")
    counter.seen["b"] = 1  # a non-frozen record is mutable, and as a dataclass of its kind unhashable
    counter.name = "c"
    assert counter == Counter("c", {"b": 1}) and Counter.__hash__ is None
    assert counter.doubled == "aa"  # __post_init__ ran once, when it was built


@dataclasses.dataclass(frozen=True)
class _DataclassPoint:
    x: int
    y: int = 0
    tags: list[str] = dataclasses.field(default_factory=list)


def test_replaced_is_a_copy_with_the_changes() -> None:
    point = Labelled(1, label="a")
    moved = replaced(point, y=5, label="b")
    assert moved == Labelled(1, 5, label="b") and point == Labelled(1, label="a")
    with pytest.raises(TypeError, match="Labelled has no field z"):
        replaced(point, z=1)


def test_a_class_that_a_dataclass_would_refuse_is_refused_where_it_is_written() -> None:
    with pytest.raises(TypeError) as err:
        type("Late", (Record,), {"__annotations__": {"a": "int", "b": "int"}, "a": 1})
    assert str(err.value) == "Late: field 'b' without a default follows 'a' (a default)"
    with pytest.raises(ValueError) as shared:
        type("Shared", (Record,), {"__annotations__": {"a": "list[int]"}, "a": []})
    assert str(shared.value) == "Shared.a: a mutable default is shared by every record; use field(default_factory=...)"
    with pytest.raises(TypeError) as mixed:
        type("Thawed", (Point,), {}, frozen=False)
    assert str(mixed.value) == "Thawed: a non-frozen record cannot inherit from a frozen one"
    with pytest.raises(TypeError) as hidden:
        type("Hidden", (Record,), {"__annotations__": {"a": "int"}, "a": dataclasses.field(default=1, repr=False)})
    assert str(hidden.value) == "Hidden.a: a record field takes only default, default_factory and kw_only"


def test_spec_error_stays_an_exception() -> None:
    diagnostic = Diagnostic(Span("a.spec", 1, 2), "wrong", "fix it")
    with pytest.raises(SpecError) as err:
        raise SpecError([diagnostic], {"a.spec": "line\n"})
    assert isinstance(err.value, Exception) and err.value.diagnostics == [diagnostic]
    assert str(err.value).startswith("a.spec:1:2: error: wrong\n")
    assert SpecError().diagnostics == [] and SpecError().sources == {}


CHECK_ALL = """
import dataclasses, gc, json, sys
from pathlib import Path
from spec_audits.cli import main
for spec in sorted(Path("specs").glob("**/*.spec")):
    try:
        main(["check", str(spec)], standalone_mode=False)
    except BaseException:  # specs/lib/ holds vocabulary, not a spec of its own
        pass
classes = [c for c in gc.get_objects() if isinstance(c, type) and isinstance(vars(c).get("__module__"), str)]
found = {f"{c.__module__}.{c.__qualname__}" for c in classes
         if c.__module__.startswith("spec_audits") and dataclasses.is_dataclass(c)}
families = sorted(m for m in sys.modules if m.startswith("spec_audits.families.") and m.count(".") == 2)
print(json.dumps({"dataclasses": sorted(found), "families": families}))
"""


@pytest.mark.slow  # every shipped spec checked: about 20 s
def test_checking_every_shipped_spec_builds_no_dataclass_but_the_one_plugins_extend() -> None:
    """compiler.family.Compiled stays one: a plug-in extends it with `@dataclass(kw_only=True)`, which reads
    the fields of dataclasses only (spec_audits/examples/echo.py)."""
    ran = subprocess.run([sys.executable, "-c", CHECK_ALL], capture_output=True, text=True, cwd=ROOT, check=True)
    seen = json.loads(ran.stdout.strip().splitlines()[-1])
    assert seen["dataclasses"] == ["spec_audits.compiler.family.Compiled"]
    folders = [path.parent.name for path in (ROOT / "families").glob("*/__init__.py")]
    built_in = sorted(f"spec_audits.families.{name}" for name in folders)
    assert seen["families"] == built_in  # every built-in family's check path was loaded and scanned
