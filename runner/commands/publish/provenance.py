"""A bundle's account of itself, recomputed from what it holds: bundle.json against the files the bundled
spec reads and the licence files that cover them, then the dataset card (README.md) and croissant.json
rebuilt from the manifest, the rows and those sources and compared with the bundle's.

Nothing a bundle says about its provenance is taken on trust: a licence is what the licence file's text
is, a source's hash is its bytes', and every path bundle.json names is looked up among the bundle's own
files (spec_audits.runner.commands.publish.members), never opened as written.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from spec_audits.contract.reader import ContractError, Suite, describe
from spec_audits.contract.writer import file_sha256
from spec_audits.runner.commands.publish.card import bundle_info, cell_types, croissant, dataset_card
from spec_audits.runner.commands.publish.members import MemberError, Members, name_problem
from spec_audits.runner.commands.publish.sources import Origin, Source, carried_name, source

BUNDLE_FILE = "bundle.json"
CARD_FILE = "README.md"
CROISSANT_FILE = "croissant.json"


class SourceEntry(BaseModel):
    """One source as bundle.json lists it."""

    model_config = ConfigDict(extra="forbid")

    path: str
    role: Literal["spec", "import", "data"]
    sha256: str
    license: str | None
    license_file: str | None
    attribution: str | None


class BundleInfo(BaseModel):
    """bundle.json, as spec_audits.runner.commands.publish.card.bundle_info writes it."""

    model_config = ConfigDict(extra="forbid")

    bundle_format: Literal[1]
    suite: str
    license: str
    compile_dir: str
    spec: str
    sources: list[SourceEntry]


@dataclass(frozen=True)
class Recipe:
    """Where bundle.json says to recompile from: the compile folder and the spec in it, checked to be
    the bundle's own, and how messages name the spec."""

    compile_dir: str
    spec: str

    @property
    def shown(self) -> str:
        return f"{self.compile_dir}/{self.spec}"


def read_recipe(members: Members) -> Recipe:
    """bundle.json's compile_dir and spec; a MemberError when they are missing or leave the bundle."""
    info = members.json(BUNDLE_FILE)
    if not isinstance(info, dict) or not all(isinstance(info.get(k), str) for k in ("compile_dir", "spec")):
        raise MemberError(f"{BUNDLE_FILE}: compile_dir and spec must be text, so the suite cannot be recompiled")
    recipe = Recipe(info["compile_dir"], info["spec"])
    if name_problem(recipe.compile_dir) or name_problem(recipe.shown) or recipe.compile_dir.split("/")[0] != "sources":
        raise MemberError(f"{BUNDLE_FILE}: compile_dir or spec leaves the bundle's sources/ folder")
    if members.path(recipe.shown) is None:
        raise MemberError(f"{recipe.shown}: missing, so the suite cannot be recompiled")
    return recipe


def first_line(a: bytes, b: bytes) -> int:
    """The first line (1-based) where two texts differ."""
    lines = zip(a.split(b"\n"), b.split(b"\n"), strict=False)
    return next((number for number, (x, y) in enumerate(lines, start=1) if x != y), min(a, b, key=len).count(b"\n") + 1)


def first_key(a: Any, b: Any, where: str = "") -> str:
    """The dotted path of the first place two JSON values differ ('' for the whole value)."""
    if isinstance(a, dict) and isinstance(b, dict):
        key = next((k for k in sorted(a.keys() | b.keys(), key=str) if a.get(k) != b.get(k) or (k in a) != (k in b)),
                   None)
        return first_key(a.get(key), b.get(key), f"{where}.{key}".lstrip(".")) if key is not None else where
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        index = next(i for i, (x, y) in enumerate(zip(a, b, strict=True)) if x != y)
        return first_key(a[index], b[index], f"{where}.{index}".lstrip("."))
    return where


def _shown(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=True, sort_keys=True)
    return text if len(text) <= 80 else text[:77] + "..."


def _listing(info: BundleInfo, read: dict[str, str], members: Members, shown: str) -> list[str]:
    """The files the spec reads are the ones listed, each with its role and the sha256 recorded."""
    listed = {entry.path: entry for entry in info.sources}
    failures = [f"{name}: read by {shown} but not listed in {BUNDLE_FILE}" for name in sorted(read.keys() - listed)]
    failures += [f"{BUNDLE_FILE}: lists {name}, which {shown} does not read" for name in sorted(listed.keys() - read)]
    for name in sorted(read.keys() & listed.keys()):
        entry, path = listed[name], members.path(name)
        if entry.role != read[name]:
            failures.append(f"{name}: {BUNDLE_FILE} says role {entry.role}, {shown} reads it as {read[name]}")
        if path is not None and file_sha256(path) != entry.sha256:
            failures.append(f"{name}: sha256 is {file_sha256(path)}, {BUNDLE_FILE} says {entry.sha256}")
    return failures


def _sources(read: dict[str, str], members: Members) -> list[Source] | str:
    """Each file the spec reads as a source with the licence its licence file gives, or why not."""
    top = members.root / "sources"
    found = []
    for name in sorted(read, key=PurePosixPath):
        if members.path(name) is None or not name.startswith("sources/"):
            return f"{name}: read by the bundled spec but not a file of the bundle's sources/"
        try:
            found.append(source(members.root / name, read[name], allow_unlicensed=True, top=top))
        except ContractError as err:
            return f"{Path(err.path).relative_to(members.root).as_posix()}: {err.problem}"
    return found


def _licences(info: BundleInfo, origin: Origin) -> list[str]:
    """Each source's licence, licence file and attribution, and the bundle's licence, as recomputed."""
    listed, failures = {entry.path: entry for entry in info.sources}, []
    for found in origin.sources:
        entry = listed[carried_name(origin, found.path)]
        recorded = {"license": entry.license, "license_file": entry.license_file, "attribution": entry.attribution}
        actual = {"license": found.licence,
                  "license_file": found.licence_file and carried_name(origin, found.licence_file),
                  "attribution": found.attribution and carried_name(origin, found.attribution)}
        failures += [f"{entry.path}: {BUNDLE_FILE} says {key} {_shown(recorded[key])}, the bundle's licence files "
                     f"give {_shown(actual[key])}" for key in recorded if recorded[key] != actual[key]]
    if info.license != origin.licence:
        failures.append(f"{BUNDLE_FILE}: says license {info.license}, its sources' licence files make it "
                        f"{origin.licence}")
    return failures


def _rebuilt(members: Members, name: str, expected: Any) -> list[str]:
    """A JSON file of the bundle against what it should hold: the first differing key, or the bytes."""
    try:
        actual = members.json(name)
    except MemberError as err:
        return [str(err)]
    if actual != expected:
        key = first_key(actual, expected)
        return [f"{name}: {key or 'the whole file'} is not what the suite and its sources give "
                f"({_shown(expected) if not key else _shown(_at(expected, key))})"]
    text = (json.dumps(expected, indent=2, sort_keys=True, ensure_ascii=False) + "\n").encode()
    ours = members.small(name)
    return [] if ours == text else [f"{name}: not laid out as `spec bundle` writes it (first at line "
                                    f"{first_line(ours, text)})"]


def _at(value: Any, key: str) -> Any:
    for part in key.split("."):
        value = value.get(part) if isinstance(value, dict) else value[int(part)] if isinstance(value, list) else None
    return value


def check_provenance(members: Members, suite: Suite | None, read: dict[str, str] | None, shown: str) -> list[str]:
    """bundle.json against the sources the spec reads (`read`: path -> role, from the recompile), then
    the card and croissant.json rebuilt from `suite` and those sources."""
    try:
        info = BundleInfo.model_validate(members.json(BUNDLE_FILE))
    except MemberError as err:
        return [str(err)]
    except ValidationError as err:
        return [f"{BUNDLE_FILE}: {describe(err)}"]
    if read is None:
        return []  # the recompile's failure says why the sources are unknown
    failures = _listing(info, read, members, shown)
    found = _sources(read, members)
    if isinstance(found, str):
        return [*failures, found]
    origin = Origin(members.root / info.compile_dir, Path(info.spec), found, top=members.root / "sources")
    failures += [] if failures else _licences(info, origin)
    if suite is None:
        return failures
    if not failures:
        expected = bundle_info(suite.manifest, origin)
        failures += _rebuilt(members, BUNDLE_FILE, expected) or _card(members, dataset_card(suite.manifest, origin,
                                                                                             expected))
    return failures + _rebuilt(members, CROISSANT_FILE, croissant(suite.manifest, origin, cell_types(suite.rows)))


def _card(members: Members, card: str) -> list[str]:
    try:
        ours = members.small(CARD_FILE)
    except MemberError as err:
        return [str(err)]
    if ours == card.encode():
        return []
    return [f"{CARD_FILE}: not the dataset card of this suite and its sources (first at line "
            f"{first_line(ours, card.encode())})"]
