"""What each family declares it accepts is what `spec check` takes and what docs/language.md says (issue 20
item 6): the docs table is generated from the declarations, every answer form a family declares checks in
that family's example spec, and every other family's form is an error there that names the family taking
it (or says that none does)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from compiler.build import check_file
from compiler.errors import SpecError
from families import registry
from families.interface import Family
from tests.families.cue.test_cue_attributes import _spec as tiny_cue
from tests.support import ROOT


def _shipped(name: str) -> Callable[[Path], Path]:
    def copy(folder: Path) -> Path:
        (folder / "data").symlink_to(ROOT / "specs" / "data")
        path = folder / name
        path.write_text((ROOT / "specs" / name).read_text(encoding="utf-8"), encoding="utf-8")
        return path
    return copy


# family -> (writes its example spec into a folder, the answer form it writes, the text around it: FORM marks it)
EXAMPLES: dict[str, tuple[Callable[[Path], Path], str, str]] = {
    "influence_pairs": (_shipped("triage.spec"), 'choice "A" | "B"', "  answer FORM\n"),
    "cue_visibility": (lambda folder: tiny_cue(folder, {"puzzled(identity, easy, intermediate, hard)":
                                                        "puzzled(identity, easy)"}),
                       "yesno", "could_be(person in A..D) FORM restating"),
    "bias_decomposition": (_shipped("cognitive_bias.spec"), "numbered arm.options", "  answer FORM\n"),
}
TAKEN_BY_NONE = ("scale 1..7", "solution identity")
BUILTIN = [family for name in sorted(registry.BUILTIN) if (family := registry.get(name)) is not None]


def test_the_docs_table_is_generated_from_the_declarations() -> None:
    docs = registry.LANGUAGE_DOCS.read_text(encoding="utf-8")
    assert registry.with_accepts_table(docs) == docs, f"docs/language.md is stale: run {registry.WRITE_COMMAND}"


def test_every_builtin_family_has_an_example() -> None:
    assert sorted(EXAMPLES) == sorted(family.name for family in BUILTIN)


def _with_answer(family: Family, form: str, folder: Path) -> Path:
    write, shipped, around = EXAMPLES[family.name]
    path = write(folder)
    text = path.read_text(encoding="utf-8")
    place = around.replace("FORM", shipped)
    assert text.count(place) == 1, place
    path.write_text(text.replace(place, around.replace("FORM", form)), encoding="utf-8")
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
