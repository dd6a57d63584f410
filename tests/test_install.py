"""Installs carry one import name, spec_audits, with everything `spec compile` needs, the grammar included,
and `spec` works from any working folder."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from tests.support import ROOT, shipped_suite

SETUPTOOLS = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]
# Runs `spec` from the installed copy only: -P keeps the working folder (the repository) off sys.path.
SPEC_FROM_INSTALL = (
    "import sys, spec_audits.compiler, spec_audits.families, spec_audits.runner; "
    "packages = (spec_audits, spec_audits.compiler, spec_audits.families, spec_audits.runner); "
    "assert all(m.__file__.startswith(sys.argv[1]) for m in packages), [m.__file__ for m in packages]; "
    "from spec_audits.cli import main; main(sys.argv[2:])"
)


@pytest.mark.slow
def test_a_non_editable_install_compiles_triage_byte_identically(tmp_path: Path) -> None:
    source = tmp_path / "source"  # a clean copy: no build/ or egg-info left over in the repository
    source.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, source / name)
    for folder in set(SETUPTOOLS["package-dir"].values()):
        shutil.copytree(ROOT / folder, source / folder, ignore=shutil.ignore_patterns("__pycache__"))
    site = tmp_path / "site"
    pip = [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--target", str(site), str(source)]
    subprocess.run(pip, check=True, timeout=300)
    installed = {p.name for p in site.iterdir() if not p.name.endswith(".dist-info")} - {"bin"}
    assert installed == {"spec_audits"}  # one import name: no top-level compiler, runner or families
    assert (site / "spec_audits" / "compiler" / "spec.lark").is_file()
    # a plug-in is type-checked against the SDK, and the worked example of docs/families.md ships
    assert (site / "spec_audits" / "py.typed").is_file() and (site / "spec_audits" / "examples" / "echo.py").is_file()
    out = tmp_path / "triage"
    env = {**os.environ, "PYTHONPATH": str(site)}
    command = [sys.executable, "-P", "-c", SPEC_FROM_INSTALL, str(site), "compile", "specs/triage.spec", "-o", str(out)]
    done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    for name in ("schema.json", "manifest.json"):  # the manifest holds suite.jsonl's sha256
        assert (out / name).read_bytes() == (ROOT / "generated" / "triage" / name).read_bytes(), name
    assert (out / "suite.jsonl").read_bytes() == (shipped_suite("triage") / "suite.jsonl").read_bytes()


def test_the_editable_install_runs_spec_from_any_working_folder(tmp_path: Path) -> None:
    probe = "import spec_audits.compiler as c, spec_audits.runner as r; print(c.__file__); print(r.__file__)"
    done = subprocess.run([sys.executable, "-P", "-c", probe], cwd=tmp_path, capture_output=True, text=True,
                          check=True, timeout=120)
    assert done.stdout.split() == [str(ROOT / "compiler" / "__init__.py"), str(ROOT / "runner" / "__init__.py")]
    spec = Path(sys.executable).with_name("spec")
    done = subprocess.run([str(spec), "check", str(ROOT / "specs" / "triage.spec")], cwd=tmp_path,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert f"{ROOT / 'specs' / 'triage.spec'}: planned size: 15,000 rows" in done.stdout
