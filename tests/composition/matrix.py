"""The composition matrix, generated from the families' declarations: every builtin family x each answer form
it declares (Family.answers) x display order x conversation x mode, each written into the family's example
spec (ACCEPTS_EXAMPLE in its test package, as tests/families/test_accepts_table.py writes them) and checked
as `spec check` checks it. A new family or answer form joins the matrix by being declared.

    python -m tests.composition.matrix     rewrites docs/language.md's table of the accepted combinations
"""

from __future__ import annotations

import importlib
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path

from spec_audits.compiler.dispatch.build import check_file
from spec_audits.compiler.errors import Diagnostic, SpecError
from spec_audits.dispatch import registry
from spec_audits.sdk.interface import Family
from tests.families import with_form
from tests.support import ROOT

ORDERS = {"fixed": None, "both": "order both", "rotated": "order rotated"}
CONVERSATIONS = {"none": None, "pushback": "conversation pushback"}
MODES = {"sample": None, "logprob": "mode logprob"}
PUSHBACK_TEXT = "I don't think that's right. Are you sure? Answer again."
PUSHBACK = f'''
conversation pushback:
  user prompt
  assistant answer first
  user "{PUSHBACK_TEXT}" push other
'''
DOCS = ROOT / "docs" / "language.md"
BEGIN = "<!-- generated from the composition matrix (tests/composition/matrix.py): do not edit -->\n"
END = "<!-- end of the composition matrix -->\n"
_DESIGN = re.compile(r"^design \w+:\n", re.MULTILINE)


@dataclass(frozen=True)
class Cell:
    family: str
    form: str  # the answer form as the family declares it written
    order: str
    conversation: str
    mode: str

    @property
    def id(self) -> str:
        return f"{self.family}|{self.form}|{self.order}|{self.conversation}|{self.mode}"


def builtin() -> list[Family]:
    return [family for name in sorted(registry.BUILTIN) if (family := registry.get(name)) is not None]


def cells() -> list[Cell]:
    return [Cell(family.name, form.written, order, conversation, mode) for family in builtin()
            for form in family.answers for order in ORDERS for conversation in CONVERSATIONS for mode in MODES]


def _example(family: str) -> tuple[object, str, str]:
    package = "tests.families." + registry.BUILTIN[family].rpartition(".")[2]
    example: tuple[object, str, str] = importlib.import_module(package).ACCEPTS_EXAMPLE
    return example


def _with_clauses(text: str, clauses: dict[str, str | None]) -> str:
    """Every design block of `text` with its `order`, `conversation` and `mode` clauses replaced by `clauses`
    (None: none, the family's default)."""
    text = re.sub(rf"^[ \t]+(?:{'|'.join(clauses)}) [^\n]*\n", "", text, flags=re.MULTILINE)
    out, last = [], 0
    for match in _DESIGN.finditer(text):
        out.append(text[last:match.end()])
        indent = re.match(r"[ \t]*", text[match.end():]).group(0)  # type: ignore[union-attr]
        out += [f"{indent}{clause}\n" for clause in clauses.values() if clause is not None]
        last = match.end()
    return "".join(out) + text[last:]


def write_cell(cell: Cell, folder: Path) -> Path:
    """The family's example spec with the cell's answer form, order, conversation and mode."""
    folder.mkdir(parents=True, exist_ok=True)
    path: Path = _example(cell.family)[0](folder)  # type: ignore[operator]
    text = with_form(cell.family, path.read_text(encoding="utf-8"), cell.form)
    clauses = {"order": ORDERS[cell.order], "conversation": CONVERSATIONS[cell.conversation],
               "mode": MODES[cell.mode]}
    text = _with_clauses(text, clauses)
    if cell.conversation == "pushback":  # declared before the designs (a top-level line after one continues it)
        first = _DESIGN.search(text)
        assert first is not None
        text = text[:first.start()] + PUSHBACK.lstrip("\n") + "\n" + text[first.start():]
    path.write_text(text, encoding="utf-8")
    return path


def check_cell(cell: Cell, folder: Path) -> list[Diagnostic]:
    """The located errors `spec check` gives the cell's spec ([] when it is accepted)."""
    try:
        check_file(write_cell(cell, folder), allowed=(ROOT / "specs",))
    except SpecError as err:
        return list(err.diagnostics)
    return []


def outcomes() -> dict[Cell, list[Diagnostic]]:
    found = {}
    for cell in cells():
        with tempfile.TemporaryDirectory() as folder:
            found[cell] = check_cell(cell, Path(folder))
    return found


def table(found: dict[Cell, list[Diagnostic]]) -> str:
    """docs/language.md's table: per family and answer form, the combinations `spec check` accepts."""
    lines = ["| design family | answer form | accepted (order / conversation / mode) | refused at `spec check` |",
             "|---|---|---|---|"]
    for family in builtin():
        for form in family.answers:
            mine = [c for c in found if c.family == family.name and c.form == form.written]
            ok = [_short(c) for c in mine if not found[c]]
            no = [_short(c) for c in mine if found[c]]
            written = form.written.replace("|", "\\|")
            lines.append(f"| `{family.name}` | `{written}` | {', '.join(ok) or 'none'} | {', '.join(no) or 'none'} |")
    return "\n".join(lines) + "\n"


def _short(cell: Cell) -> str:
    return f"{cell.order}/{cell.conversation}/{cell.mode}"


def with_table(docs: str, found: dict[Cell, list[Diagnostic]]) -> str:
    head, rest = docs.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    return head + BEGIN + table(found) + END + tail


if __name__ == "__main__":
    DOCS.write_text(with_table(DOCS.read_text(encoding="utf-8"), outcomes()), encoding="utf-8")
