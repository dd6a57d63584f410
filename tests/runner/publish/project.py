"""A small spec project to bundle: a spec (MIT) that imports a vocabulary file and reads a CSV whose folder
carries its own licence (CC BY-SA 4.0 unless told otherwise)."""

from __future__ import annotations

from pathlib import Path

from spec_audits.compiler.dispatch.build import compile_file
from tests.support import FIXTURES, ROOT

MIT = (ROOT / "specs" / "LICENSE").read_text(encoding="utf-8")
CC_BY_SA = "Attribution-ShareAlike 4.0 International\n\n(legal code abridged for the tests)\n"
CC_BY = "Attribution 4.0 International\n\n(legal code abridged for the tests)\n"


def make_project(root: Path, data_licence: str | None = CC_BY_SA) -> Path:
    """Write the project into `root` (the working folder of the test), compile it, return the suite folder."""
    spec = (FIXTURES / "specs" / "golden_oneorder.spec").read_text(encoding="utf-8")
    spec = spec.replace("seed 5\n", 'seed 5\nimport "vocab.spec"\ndata extra from "data/extra.csv" key id\n')
    (root / "tiny.spec").write_text(spec.replace("influences hint, later", "influences hint, later, third"))
    (root / "vocab.spec").write_text('influence third append "Think of {{ target.plural }}."\n')
    (root / "LICENSE").write_text(MIT)
    (root / "data").mkdir()
    (root / "data" / "extra.csv").write_text("id,text\nr1,hello\n")
    (root / "data" / "ATTRIBUTION.md").write_text("# extra.csv\n\nAdapted from a test source.\n")
    if data_licence:
        (root / "data" / "LICENSE").write_text(data_licence)
    compile_file(Path("tiny.spec"), Path("out/tiny"))
    return Path("out/tiny")
