"""Every user mistake gives exact, located diagnostics through `spec check`, never a traceback.

Each tests/fixtures/malformed/*.spec states what `spec check` must report, in its own header:
`# expect: LINE:COLUMN: message` (or `# expect: OTHER_FILE:LINE:COLUMN: message` for an error in an
imported file), each followed by `# hint: text` or `# hint: (none)`. The listed diagnostics must be
exactly the ones reported, in order.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from spec_audits.compiler.commands.cli import check
from tests.support import FIXTURES

MALFORMED = FIXTURES / "malformed"
CASES = sorted(MALFORMED.glob("*.spec"))
HEAD = re.compile(r"^(?P<file>.+?):(?P<line>\d+):(?P<column>\d+): error: (?P<message>.*)$")
EXPECT = re.compile(rb"^# expect: (?:(?P<file>[^:\s]+\.spec):)?(?P<where>\d+:\d+): (?P<message>.*)$")
HINT = re.compile(rb"^# hint: (?P<hint>.*)$")


@dataclass(frozen=True)
class Reported:
    """One diagnostic as `spec check` prints it."""

    where: str  # FILE:LINE:COLUMN
    message: str
    hint: str | None


def expected(path: Path) -> list[Reported]:
    """The diagnostics a fixture declares in its header (bytes: some fixtures are not UTF-8)."""
    lines = path.read_bytes().split(b"\n")
    out = []
    for head, hint_line in zip(lines[::2], lines[1::2], strict=False):
        match, hint = EXPECT.match(head), HINT.match(hint_line)
        if match is None:
            break
        assert hint is not None, f"{path.name}: every '# expect:' line needs a '# hint:' line after it"
        file = (match["file"] or path.name.encode()).decode()
        hint_text = hint["hint"].decode()
        out.append(Reported(f"{file}:{match['where'].decode()}", match["message"].decode(),
                            None if hint_text == "(none)" else hint_text))
    return out


def reported(output: str) -> list[Reported]:
    """Parse the diagnostics out of `spec check` output."""
    found = []
    for block in output.split("\n\n"):
        lines = block.splitlines()
        match = HEAD.match(lines[0]) if lines else None
        if match is None:
            continue
        hint = next((line.removeprefix("  hint: ") for line in lines if line.startswith("  hint: ")), None)
        found.append(Reported(f"{match['file']}:{match['line']}:{match['column']}", match["message"], hint))
    return found


def run_check(name: str, monkeypatch: pytest.MonkeyPatch, folder: Path = MALFORMED) -> Result:
    monkeypatch.chdir(folder)
    result = CliRunner().invoke(check, [name])
    assert result.exit_code == 1, result.output
    assert isinstance(result.exception, SystemExit), result.exception
    return result


def test_there_are_at_least_40_cases() -> None:
    assert len(CASES) >= 40
    assert all(expected(case) for case in CASES), [c.name for c in CASES if not expected(c)]


@pytest.mark.parametrize("case", CASES, ids=lambda p: p.stem)
def test_malformed_spec_is_reported_exactly(case: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    result = run_check(case.name, monkeypatch)
    assert reported(result.output) == expected(case)
    count = len(expected(case))
    assert result.output.rstrip().endswith(f"{count} error{'s' if count != 1 else ''} found.")


@pytest.mark.parametrize("case", CASES, ids=lambda p: p.stem)
def test_every_diagnostic_quotes_its_line_with_a_caret(case: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    result = run_check(case.name, monkeypatch)
    for block in result.output.split("\n\n")[:-1]:
        lines = block.splitlines()
        head = HEAD.match(lines[0])
        assert head is not None
        gutter = f"{int(head['line']):>5} | "
        assert lines[1].startswith(gutter)
        caret = lines[2]
        assert caret.index("^") == len(gutter) + int(head["column"]) - 1


def test_missing_file(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    result = run_check("nowhere.spec", monkeypatch, tmp_path)
    assert reported(result.output) == [Reported("nowhere.spec:1:1", "no such spec file",
                                                "check the path and try again")]


SEVERAL = '''suite several "Several mistakes"
seed 1
factor color:
  A red "red people" / "red person"
  B blue "blue people" / "blue person"
template question "{{ first.n }} {{ frist.noun }} or {{ second.n }} {{ second.noun }}"
influence nudge apend "Choose {{ target.plural }}."
design main:
  factors colour
  influences *
  conditions baseline, toward A, toward B
  sizes n_A in 1..3, n_B in 1..3
  order bothh
  answer choice "A" | "B"
  decode temprature 1.0
'''


def test_several_errors_of_one_file_are_reported_together(monkeypatch: pytest.MonkeyPatch,
                                                           tmp_path: Path) -> None:
    (tmp_path / "several.spec").write_text(SEVERAL, encoding="utf-8")
    result = run_check("several.spec", monkeypatch, tmp_path)
    assert [(r.where, r.message) for r in reported(result.output)] == [
        ("several.spec:7:17", "unknown position 'apend' for influence 'nudge'"),
        ("several.spec:9:11", "unknown factor 'colour'"),
        ("several.spec:13:9", "unknown display order 'bothh'"),
        ("several.spec:15:10", "unknown decode setting 'temprature'"),
    ]
    assert result.output.rstrip().endswith("4 errors found.")
