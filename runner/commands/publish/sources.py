"""The files a suite was compiled from, with the licence and attribution that cover each one.

A file's licence is the first licence file (LICENSE, LICENSE.txt, ...) found in its folder or a folder
above it; its attribution is the nearest ATTRIBUTION.md or NOTICE on that walk, up to the licence's
folder. The bundle's licence is the most restrictive of its sources' licences, which every one of them
allows: MIT and CC0 material may be redistributed under CC BY, CC BY material under CC BY-SA, and
CC BY-SA (share-alike) material only under CC BY-SA.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from spec_audits.compiler.dispatch.build import read_spec_file
from spec_audits.contract.reader import MANIFEST_FILE, ContractError, read_manifest
from spec_audits.contract.writer import file_sha256

LICENCE_FILES = ("LICENSE", "LICENSE.txt", "LICENSE.md", "LICENCE", "LICENCE.txt", "COPYING")
ATTRIBUTION_FILES = ("ATTRIBUTION.md", "NOTICE", "NOTICE.md")
UNLICENSED = "other"
"""The bundle licence when some source has none (allowed only with --allow-unlicensed)."""

# Least to most restrictive; every licence here allows redistribution under any licence after it.
RANK = ("CC0-1.0", "MIT", "CC-BY-4.0", "CC-BY-SA-4.0")
# (SPDX id, a phrase of its text); the share-alike and non-commercial variants are tried first because
# "Attribution 4.0 International" is a substring of neither, but their titles must not fall through.
_SIGNATURES = (
    ("CC-BY-SA-4.0", "attribution-sharealike 4.0 international"),
    (None, "attribution-noncommercial"),
    (None, "attribution-noderivatives"),
    ("CC-BY-4.0", "attribution 4.0 international"),
    ("CC0-1.0", "cc0 1.0 universal"),
    ("MIT", "permission is hereby granted, free of charge"),
)
FIX_LICENCE = (f"put a licence file ({', '.join(LICENCE_FILES[:2])}) with one of {', '.join(RANK)} next to it or "
               "in a folder above it, or bundle anyway with --allow-unlicensed")


@dataclass(frozen=True)
class Source:
    """One file the suite was compiled from: its path, role (spec, import, data), sha256, licence and
    attribution."""

    path: Path
    role: str
    sha256: str
    licence: str | None
    licence_file: Path | None
    attribution: Path | None


@dataclass(frozen=True)
class Origin:
    """The spec of a suite, the folder it was compiled from and every source file with its licence."""

    compile_dir: Path
    spec: Path
    sources: list[Source]
    top: Path | None = None
    """The root when it is known (a bundle's sources/ folder); else the deepest folder holding them all."""

    @property
    def licence(self) -> str:
        found = [s.licence for s in self.sources if s.licence is not None]
        return UNLICENSED if len(found) < len(self.sources) else max(found, key=RANK.index)

    def files(self) -> list[Path]:
        """Every file the bundle carries under sources/: the sources, their licences and attributions."""
        extra = {p for s in self.sources for p in (s.licence_file, s.attribution) if p is not None}
        return sorted({s.path for s in self.sources} | extra)

    def root(self) -> Path:
        """The deepest folder that holds the compile folder and every file carried (or `top`)."""
        if self.top is not None:
            return self.top
        return Path(os.path.commonpath([self.compile_dir, *(p.parent for p in self.files())]))


def identify(text: str) -> str | None:
    """The SPDX id of a licence text, or None when it is not one this tool can combine."""
    flat = " ".join(text[:4000].lower().split())
    for spdx, phrase in _SIGNATURES:
        if phrase in flat:
            return spdx
    return None


def _nearest(folder: Path, names: tuple[str, ...], stop: Path | None = None) -> Path | None:
    for candidate in (folder, *folder.parents):
        for name in names:
            if (candidate / name).is_file():
                return candidate / name
        if candidate == stop:
            break
    return None


def _licence_text(path: Path) -> str:
    with path.open("rb") as handle:  # identify reads the first 4,000 characters; a licence file may be huge
        return handle.read(16_000).decode("utf-8", errors="replace")


def source(path: Path, role: str, allow_unlicensed: bool, top: Path | None = None) -> Source:
    """`path` as a source, with the licence and attribution files that cover it (found no higher than
    `top`, when given); a ContractError when its licence is not one this tool knows, or it has none and
    `allow_unlicensed` is false."""
    licence_file = _nearest(path.parent, LICENCE_FILES, top)
    licence = identify(_licence_text(licence_file)) if licence_file else None
    if licence_file and licence is None:
        raise ContractError(licence_file, f"not a licence this tool recognises (one of {', '.join(RANK)})",
                            fix=f"bundle {path} under one of those licences")
    if licence is None and not allow_unlicensed:
        raise ContractError(path, "no licence file covers this file", fix=FIX_LICENCE)
    attribution = _nearest(path.parent, ATTRIBUTION_FILES, licence_file.parent if licence_file else top)
    return Source(path, role, file_sha256(path), licence, licence_file, attribution)


def read_by(spec: Path) -> dict[Path, str]:
    """Every file compiling `spec` reads (resolved), with its role: the spec, its imports, its data files."""
    parsed, texts = read_spec_file(spec)
    roles = {Path(shown).resolve(): "import" for shown in texts} | {spec.resolve(): "spec"}
    for data in parsed.data:
        roles.setdefault((Path(data.span.file).parent / data.path.value).resolve(), "data")
    return dict(sorted(roles.items()))


def origin_of(suite_dir: Path, allow_unlicensed: bool = False) -> Origin:
    """The spec that compiled `suite_dir` (found from the working folder, as the manifest records it),
    checked against the manifest's hash, with its imports and data files and their licences."""
    manifest, _ = read_manifest(suite_dir)
    where = suite_dir / MANIFEST_FILE
    if Path(manifest.spec_file).is_absolute():
        raise ContractError(where, f"spec_file {manifest.spec_file!r} is an absolute path",
                            fix="compile the spec again from a folder that holds it, then bundle from there")
    spec = Path(manifest.spec_file)
    if not spec.is_file():
        raise ContractError(where, f"spec_file {manifest.spec_file!r} not found from {Path.cwd()}",
                            fix="run `spec bundle` from the folder the suite was compiled in")
    if file_sha256(spec) != manifest.spec_sha256:
        raise ContractError(spec, f"changed since {where} was compiled (spec_sha256 differs)",
                            fix="compile the suite again with `spec compile`, then bundle it")
    sources = [source(path, role, allow_unlicensed) for path, role in read_by(spec).items()]
    return Origin(Path.cwd().resolve(), spec, sources)


def carried_name(origin: Origin, path: Path) -> str:
    """Where `path` lies in a bundle: sources/ then its path below the origin's root, with / separators."""
    return "sources/" + path.relative_to(origin.root()).as_posix()


def spdx_url(licence: str) -> str | None:
    return None if licence == UNLICENSED else f"https://spdx.org/licenses/{licence}.html"


def hf_licence(licence: str) -> str:
    """The Hugging Face card's `license` value for an SPDX id."""
    return licence.lower()
