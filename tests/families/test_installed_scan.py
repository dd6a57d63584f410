"""Issue 33 item 3: the installed families are read (importlib.metadata, whose import and scan cost a `spec check`
~25 ms) only where a family that is not built in is looked up or the families are listed. A spec of built-in
families is checked without them unless an entry_points.txt on the path may declare a built-in name, which must
still be refused (tests/families/echo/test_echo.py, an installed family may not take a built-in name)."""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

import importlib_metadata  # litellm's dependency
import pytest

from spec_audits.dispatch import registry
from tests.families.test_boundary import ECHO
from tests.plugins import install
from tests.support import ROOT

BUILTIN = frozenset(registry.BUILTIN)
PROBE = """
import sys
from spec_audits.cli import main
try:
    main(["check", sys.argv[1]])
except SystemExit as done:
    assert done.code in (0, None), done.code
print("importlib.metadata" in sys.modules)
"""


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A site-packages folder, the only entry of sys.path that the registry's look at the files sees."""
    folder = tmp_path / "site"
    folder.mkdir()
    monkeypatch.setattr(sys, "path", [str(folder)])
    return folder


def _reads_metadata(site: Path, spec: str) -> bool:
    """Whether `spec check SPEC`, in a process with `site` on its path, imported importlib.metadata."""
    env = {**os.environ, "PYTHONPATH": str(site)}
    ran = subprocess.run([sys.executable, "-c", PROBE, spec], cwd=ROOT, capture_output=True, text=True, env=env)
    assert ran.returncode == 0, ran.stderr
    return ran.stdout.split()[-1] == "True"


def test_a_spec_of_builtin_families_is_checked_without_the_installed_ones(site: Path, tmp_path: Path) -> None:
    install(site, "spec-echo-family", {"echo": "spec_audits.examples.echo:FAMILY"}, {})
    assert not _reads_metadata(site, "specs/triage.spec")
    echo = tmp_path / "echo.spec"
    echo.write_text(ECHO, encoding="utf-8")
    assert _reads_metadata(site, str(echo))  # and it checks: echo was found among them


def test_only_a_declaration_of_a_builtin_name_in_the_group_counts(site: Path) -> None:
    install(site, "spec-echo", {"echo": "spec_echo:FAMILY"}, {})
    assert not registry._may_declare(BUILTIN) and registry._may_declare(frozenset({"echo"}))
    other = site / "other_tool-1.0.dist-info"
    other.mkdir()
    (other / "METADATA").write_text("Metadata-Version: 2.1\nName: other-tool\nVersion: 1.0\n", encoding="utf-8")
    (other / "entry_points.txt").write_text(
        f"# {registry.ENTRY_POINTS}: influence_pairs\n[console_scripts]\ninfluence_pairs = other:main\n"
        f"[{registry.ENTRY_POINTS}]\n  echo2 = other:FAMILY\n", encoding="utf-8")
    assert not registry._may_declare(BUILTIN)
    install(site, "spec-impostor", {"effects": "spec_impostor:FAMILY"}, {})
    assert registry._may_declare(BUILTIN)


def test_a_path_entry_it_cannot_read_as_folders_is_read_properly(site: Path, tmp_path: Path) -> None:
    assert not registry._may_declare(BUILTIN)
    archive = tmp_path / "bundle.zip"
    with zipfile.ZipFile(archive, "w") as bundle:
        bundle.writestr("readme.txt", "")
    sys.path.append(str(archive))
    assert registry._may_declare(BUILTIN)
    sys.path[-1] = str(tmp_path / "old.egg")
    (tmp_path / "old.egg").mkdir()
    assert registry._may_declare(BUILTIN)


def test_a_finder_of_distributions_besides_the_path_s_is_read_properly(
        site: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """importlib_metadata's backport finder (put on sys.meta_path by libraries a test process imported) reads the
    same folders, so it changes nothing; any other finder of distributions may know of a family: read them all."""
    monkeypatch.setattr(sys, "meta_path", [*sys.meta_path, importlib_metadata.MetadataPathFinder()])
    assert not registry._may_declare(BUILTIN)

    class Elsewhere:
        def find_distributions(self, context: object = None) -> list[object]:
            return []

    monkeypatch.setattr(sys, "meta_path", [*sys.meta_path, Elsewhere()])
    assert registry._may_declare(BUILTIN)
