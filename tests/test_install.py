"""A non-editable install carries everything `spec compile` needs, the grammar included."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support import ROOT, shipped_suite

# Runs `spec` from the installed copy only: -P keeps the working folder (the repository) off sys.path.
SPEC_FROM_INSTALL = (
    "import sys, compiler, families, runner; "
    "assert all(m.__file__.startswith(sys.argv[1]) for m in (compiler, families, runner)), "
    "(compiler.__file__, families.__file__, runner.__file__); "
    "from runner.cli import main; main(sys.argv[2:])"
)


@pytest.mark.slow
def test_a_non_editable_install_compiles_triage_byte_identically(tmp_path: Path) -> None:
    source = tmp_path / "source"  # a clean copy: no build/ or egg-info left over in the repository
    source.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, source / name)
    for package in ("compiler", "families", "runner"):
        shutil.copytree(ROOT / package, source / package, ignore=shutil.ignore_patterns("__pycache__"))
    site = tmp_path / "site"
    pip = [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--target", str(site), str(source)]
    subprocess.run(pip, check=True, timeout=300)
    assert (site / "compiler" / "spec.lark").is_file()
    out = tmp_path / "triage"
    env = {**os.environ, "PYTHONPATH": str(site)}
    command = [sys.executable, "-P", "-c", SPEC_FROM_INSTALL, str(site), "compile", "specs/triage.spec", "-o", str(out)]
    done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    for name in ("schema.json", "manifest.json"):  # the manifest holds suite.jsonl's sha256
        assert (out / name).read_bytes() == (ROOT / "generated" / "triage" / name).read_bytes(), name
    assert (out / "suite.jsonl").read_bytes() == (shipped_suite("triage") / "suite.jsonl").read_bytes()
