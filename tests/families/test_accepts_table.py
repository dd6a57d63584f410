"""What each family declares it accepts is what `spec check` takes and what docs/language.md says (issue 20
item 6): the docs table is generated from the declarations, every answer form a family declares checks in
that family's example spec, and every other family's form is an error there that names the family taking
it (or says that none does)."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from pathlib import Path

import pytest

from spec_audits.compiler.dispatch.build import check_file
from spec_audits.compiler.errors import SpecError
from spec_audits.dispatch import registry
from spec_audits.sdk.interface import Family
from tests.families import with_form
from tests.support import ROOT

Example = tuple[Callable[[Path], Path], str, str]
BUILTIN = [family for name in sorted(registry.BUILTIN) if (family := registry.get(name)) is not None]


def _tests_of(family: Family) -> str:
    """The test package of a builtin family: spec_audits.families.X is tested in tests.families.X."""
    return "tests.families." + registry.BUILTIN[family.name].rpartition(".")[2]


def _example(family: Family) -> Example:
    """How to write `family`'s example spec, the answer form it writes and the text around it (FORM marks it):
    ACCEPTS_EXAMPLE in the family's own test package, so a new family adds its example in its own folder."""
    example = getattr(importlib.import_module(_tests_of(family)), "ACCEPTS_EXAMPLE", None)
    assert example is not None, f"define ACCEPTS_EXAMPLE in {_tests_of(family).replace('.', '/')}/__init__.py"
    return example


TAKEN_BY_NONE: tuple[str, ...] = ()


def test_the_docs_table_is_generated_from_the_declarations() -> None:
    docs = registry.LANGUAGE_DOCS.read_text(encoding="utf-8")
    assert registry.with_accepts_table(docs) == docs, f"docs/language.md is stale: run {registry.WRITE_COMMAND}"


@pytest.mark.parametrize("family", BUILTIN, ids=lambda f: f.name)
def test_every_builtin_family_has_an_example(family: Family) -> None:
    write, shipped, around = _example(family)
    assert shipped in {a.written for a in family.answers} and "FORM" in around


def _with_answer(family: Family, form: str, folder: Path) -> Path:
    path = _example(family)[0](folder)
    path.write_text(with_form(family.name, path.read_text(encoding="utf-8"), form), encoding="utf-8")
    return path


def _errors(path: Path) -> list[tuple[str, str | None]]:
    try:
        check_file(path, allowed=(ROOT / "specs",))
    except SpecError as err:
        return [(d.message, d.hint) for d in err.diagnostics]
    return []


@pytest.mark.parametrize(("family", "form"), [(f, a.written) for f in BUILTIN for a in f.answers],
                         ids=lambda x: x.name if isinstance(x, Family) else x)
def test_every_declared_answer_form_checks_in_its_family(family: Family, form: str, tmp_path: Path) -> None:
    assert _errors(_with_answer(family, form, tmp_path)) == []


def _foreign() -> list[tuple[Family, str, str]]:
    """(family, another family's answer form, what the hint says of it)."""
    cases = []
    for family in BUILTIN:
        taken = {a.name for a in family.answers}
        for other in BUILTIN:
            cases += [(family, a.written, _belongs(a.name, family)) for a in other.answers if a.name not in taken]
        cases += [(family, form, "no design family takes answer") for form in TAKEN_BY_NONE]
    return cases


def _belongs(kind: str, family: Family) -> str:
    """The hint's words for the other families that take answer form `kind`."""
    owners = [f for f in BUILTIN if f is not family and kind in {a.name for a in f.answers}]
    return (f"belongs to {' or '.join(f.title for f in owners)} designs: declare "
            + " or ".join(f"'analysis {f.name}'" for f in owners))


@pytest.mark.parametrize(("family", "form", "says"), _foreign(), ids=lambda x: x.name if isinstance(x, Family) else x)
def test_a_form_the_family_does_not_take_is_an_error_naming_who_takes_it(family: Family, form: str, says: str,
                                                                          tmp_path: Path) -> None:
    kind = form.split()[0]
    takes = ", ".join(a.written for a in family.answers)
    found = [(m, h) for m, h in _errors(_with_answer(family, form, tmp_path)) if "does not take answer" in m]
    assert len(found) == 1, _errors(_with_answer(family, form, tmp_path / "again"))
    message, hint = found[0]
    title = family.title
    assert message == f"{'an' if title[0] in 'aeiou' else 'a'} {title} design does not take answer '{kind}'"
    assert hint is not None and hint.startswith(f"it takes: {takes}; ") and says in hint
