"""Whatever bytes or tokens a spec holds, `spec check` ends with exit 0 (valid, with a planned size) or
exit 1 with located diagnostics: never a traceback, never another exit status."""

from __future__ import annotations

import re
from pathlib import Path

from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from spec_audits.compiler.commands.cli import check
from spec_audits.compiler.parse import spec_parser
from spec_audits.dispatch import registry
from tests.support import ROOT

LOCATED = re.compile(r"^fuzz\.spec:\d+:\d+: error: ", re.MULTILINE)
SEEDS = [(ROOT / "specs" / name).read_text(encoding="utf-8") for name in ("triage.spec", "cue_visibility.spec")]
MALFORMED = ROOT / "tests" / "fixtures" / "malformed"
SMALL = [(MALFORMED / name).read_text(encoding="utf-8").split("\n", 2)[2].split(" ")
         for name in ("samples_zero.spec", "cue_unknown_axis.spec")]
KEYWORDS = sorted({t.pattern.value for t in spec_parser(registry.syntax()).terminals if t.pattern.type == "str"})
PIECES = [*KEYWORDS, "A", "B", "red", "x", "n_A", "0", "1", "-2", "1.5", "2.5", "999999999", "combinations",
          '"text {{ first.n }}"', '"""\n{{ target.plural }}\n"""', '"data/dilemmas.csv"', '"../outside.spec"',
          "\n", "  "]
FUZZ = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


def assert_clean_exit(folder: Path, data: bytes) -> None:
    (folder / "fuzz.spec").write_bytes(data)
    result = CliRunner().invoke(check, [str(folder / "fuzz.spec")], catch_exceptions=True)
    assert result.exit_code in (0, 1), result.output
    if result.exit_code == 0:
        assert result.exception is None
        assert "planned size" in result.output or "is valid" in result.output
    else:
        assert isinstance(result.exception, SystemExit), repr(result.exception)
        assert LOCATED.search(result.output.replace(str(folder) + "/", "")), result.output


@FUZZ
@given(data=st.binary(max_size=400))
def test_random_bytes(data: bytes, tmp_path: Path) -> None:
    assert_clean_exit(tmp_path, data)


@FUZZ
@given(tokens=st.lists(st.sampled_from(PIECES), max_size=60))
def test_random_token_sequences(tokens: list[str], tmp_path: Path) -> None:
    assert_clean_exit(tmp_path, " ".join(tokens).encode())


@FUZZ
@given(seed=st.sampled_from(SEEDS), cut=st.integers(0, 10_000), insert=st.sampled_from(PIECES))
def test_edited_real_specs(seed: str, cut: int, insert: str, tmp_path: Path) -> None:
    at = cut % (len(seed) + 1)
    assert_clean_exit(tmp_path, (seed[:at] + " " + insert + " " + seed[at:]).encode())


@FUZZ
@given(spec=st.sampled_from(SMALL), edits=st.lists(st.tuples(st.integers(0, 10_000), st.sampled_from(PIECES)),
                                                   min_size=1, max_size=3))
def test_mutated_small_specs(spec: list[str], edits: list[tuple[int, str]], tmp_path: Path) -> None:
    """Small valid-looking specs (one of each family, its data beside it) with a few words replaced."""
    (tmp_path / "cue_data").mkdir(exist_ok=True)
    (tmp_path / "cue_data" / "dilemmas.csv").write_bytes((MALFORMED / "cue_data" / "dilemmas.csv").read_bytes())
    words = list(spec)
    for at, piece in edits:
        words[at % len(words)] = piece
    assert_clean_exit(tmp_path, " ".join(words).encode())
